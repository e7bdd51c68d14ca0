import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { makeTestApp, type TestApp } from "../support/test-app.ts";

/**
 * A member that should be a string and is not: the detail names the JSON kind found and
 * quotes at most 40 characters of it as JSON, never the value through String() (an
 * array of one address read as that address, an object as [object Object], nested empty
 * arrays as nothing) nor the whole of a large value.
 */
let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp();
  key = (await t.issueKey()).secret;
});
afterAll(() => t.close());

async function detailOf(path: string, body: unknown): Promise<string> {
  const response = await t.request("POST", path, { key, body });
  const problem = (await response.json()) as { code: string; detail: string };
  expect([response.status, problem.code]).toEqual([400, "invalid_request"]);
  return problem.detail;
}

const nested = (levels: number): unknown => (levels === 0 ? [] : [nested(levels - 1)]);

describe("the detail of a value that is not a string", () => {
  const cases: Array<[string, string, unknown, string]> = [
    ["an array of one address", "/v1/lookup", { ip: ["1.1.1.1"] }, '/ip: Expected string but found an array: ["1.1.1.1"]'],
    ["an object", "/v1/lookup", { ip: { a: 1 } }, '/ip: Expected string but found an object: {"a":1}'],
    ["a number", "/v1/lookup", { ip: 16843009 }, "/ip: Expected string but found a number: 16843009"],
    ["a boolean", "/v1/lookup", { ip: true }, "/ip: Expected string but found a boolean: true"],
    ["null", "/v1/lookup", { ip: null }, "/ip: Expected string but found null"],
    ["an empty array", "/v1/lookup", { ip: [] }, "/ip: Expected string but found an array: []"],
    ["a batch entry", "/v1/lookup/batch", { ips: ["1.1.1.1", { ip: "1.1.1.1" }] }, '/ips/1: Expected string but found an object: {"ip":"1.1.1.1"}'],
    // 40 characters exactly: shown whole.
    ["an array of 40 characters", "/v1/lookup", { ip: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16] }, "/ip: Expected string but found an array: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]"],
    ["31 levels of nested arrays", "/v1/lookup", { ip: nested(30) }, `/ip: Expected string but found an array: ${"[".repeat(31)}${"]".repeat(9)}…`],
  ];
  for (const [what, path, body, detail] of cases) {
    test(`${what}: ${detail}`, async () => {
      expect(await detailOf(path, body)).toBe(detail);
    });
  }

  test("a large value is cut to 40 characters", async () => {
    const detail = await detailOf("/v1/lookup", { ip: Array(50_000).fill("1.1.1.1") });
    expect(detail).toBe(`/ip: Expected string but found an array: ${'["1.1.1.1",'}${'"1.1.1.1",'.repeat(2)}"1.1.1.1"…`);
  });

  test("the cut never splits a character outside the Basic Multilingual Plane", async () => {
    // ["a then pairs: the 40th character would be the first half of one.
    const detail = await detailOf("/v1/lookup", { ip: [`a${"😀".repeat(30)}`] });
    expect(detail.isWellFormed()).toBe(true);
    expect(detail).toBe(`/ip: Expected string but found an array: ["a${"😀".repeat(18)}…`);
  });
});
