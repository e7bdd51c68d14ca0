import { describe, expect, test } from "bun:test";
import { AnswerHeaders, type AnswerFacts } from "../../src/http/answer-headers.ts";

const facts = (changes: Partial<AnswerFacts> = {}): AnswerFacts => ({ dataVersion: "2026-11-01", consumed: 1, remaining: null, cors: undefined, requestId: "r-1", ...changes });
/** The entries of one answer, as the Response built from them holds them. */
const answer = (headers: AnswerHeaders, changes: Partial<AnswerFacts> = {}) => Object.fromEntries(new Response("{}", { headers: headers.for(facts(changes)) }).headers);

describe("AnswerHeaders", () => {
  test("an answer carries its type, units, data version and request id", () => {
    expect(answer(new AnswerHeaders(), { consumed: 3, remaining: 97 })).toEqual({
      "content-type": "application/json",
      "x-data-version": "2026-11-01",
      "x-units-consumed": "3",
      "x-units-remaining": "97",
      "x-request-id": "r-1",
    });
  });

  test("nothing of one answer is left in the next", () => {
    const headers = new AnswerHeaders();
    answer(headers, { consumed: 5, remaining: 10, requestId: "r-1", dataVersion: "old" });
    const next = answer(headers, { consumed: 1, remaining: null, requestId: undefined, dataVersion: "new" });
    expect(next).toEqual({ "content-type": "application/json", "x-data-version": "new", "x-units-consumed": "1" });
    expect(answer(headers, { remaining: 0, requestId: "r-2" })).toMatchObject({ "x-units-remaining": "0", "x-request-id": "r-2", "x-data-version": "2026-11-01" });
  });

  test("an answer built earlier keeps its own entries", () => {
    const headers = new AnswerHeaders();
    const first = new Response("{}", { headers: headers.for(facts({ consumed: 7, requestId: "a" })) });
    answer(headers, { consumed: 8, requestId: "b", remaining: 4 });
    expect(first.headers.get("x-units-consumed")).toBe("7");
    expect(first.headers.get("x-request-id")).toBe("a");
    expect(first.headers.has("x-units-remaining")).toBe(false);
  });

  test("CORS: nothing for a key without origins, Vary alone without an Origin, the origin allowed with its headers", () => {
    const headers = new AnswerHeaders();
    const none = answer(headers, { cors: undefined });
    expect(Object.keys(none).filter((name) => name === "vary" || name.startsWith("access-control-"))).toEqual([]);
    const varyOnly = answer(headers, { cors: null });
    expect(varyOnly.vary).toBe("Origin");
    expect(varyOnly["access-control-allow-origin"]).toBeUndefined();
    const allowed = answer(headers, { cors: "https://a.example.com" });
    expect(allowed.vary).toBe("Origin");
    expect(allowed["access-control-allow-origin"]).toBe("https://a.example.com");
    expect(allowed["access-control-expose-headers"]).toContain("X-Units-Consumed");
    expect(answer(headers, { cors: "http://localhost:5173" })["access-control-allow-origin"]).toBe("http://localhost:5173");
    expect(answer(headers, { cors: undefined })["access-control-allow-origin"]).toBeUndefined();
  });
});
