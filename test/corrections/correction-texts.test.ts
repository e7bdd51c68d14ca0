import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { defaultDataPath } from "../../src/config/paths.ts";
import { CorrectionError, checkCorrectionFields, checkNote, textFault } from "../../src/corrections/correction-rules.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { adminAppOf, makeTestApp, type TestApp } from "../support/test-app.ts";

/**
 * A correction's texts (as_name, city, privacy.service: 1 to 200 characters; a note: 1 to
 * 500) and a signal source's service are counted in characters, code points, as the docs
 * and messages say: an emoji is one character, though two UTF-16 code units. The same in
 * the rule, the admin API and the command line.
 */

const RULE = "1 to 200 characters, not all spaces, without control characters";
const emoji = (n: number) => "😀".repeat(n);

describe("the rule counts characters", () => {
  test("200 emoji are a text, 201 are not; 500 are a note, 501 are not", () => {
    expect(emoji(200).length).toBe(400);
    expect(textFault(emoji(200))).toBeNull();
    expect(textFault(emoji(201))).toBe(RULE);
    expect(textFault(`${emoji(199)}é`)).toBeNull();
    expect(checkCorrectionFields({ as_name: emoji(200), city: emoji(200), privacy: { service: emoji(200) } })).toEqual({ as_name: emoji(200), city: emoji(200), privacy: { service: emoji(200) } });
    expect(() => checkCorrectionFields({ city: emoji(201) })).toThrow(new CorrectionError(`city: ${RULE}`));
    expect(checkNote(emoji(500))).toBe(emoji(500));
    expect(() => checkNote(emoji(501))).toThrow("note: 1 to 500 characters");
  });
});

describe("the admin API counts characters", () => {
  let t: TestApp;
  let token: string;
  beforeAll(async () => {
    t = await makeTestApp();
    token = (await t.store.createAdminToken("ops")).secret;
  });
  afterAll(() => t.close());

  const put = async (path: string, body: unknown) => {
    const admin = adminAppOf(t);
    const response = await admin.handle(
      new Request(`http://admin/admin/v1/corrections/${path}`, { method: "PUT", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) }),
    );
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  test("200 emoji in each text and 500 in the note are set", async () => {
    const fields = { as_name: emoji(200), city: emoji(200), privacy: { service: emoji(200) } };
    const set = await put("1.1.1.0_24", { ...fields, note: emoji(500) });
    expect(set).toMatchObject({ status: 200, body: { cidr: "1.1.1.0/24", ...fields, note: emoji(500) } });
  });

  test("past the limit, refused with the rule, whether counted by the schema or the rule; nothing written", async () => {
    const before = await t.store.listCorrections();
    // 201 characters in 400 UTF-16 code units, which only the rule counts; 201 emoji are
    // 402 units, past the schema's bound, which says the same rule.
    const justOver = `${emoji(199)}xx`;
    const refused: [unknown, string][] = [
      [{ as_name: justOver }, `as_name: ${RULE}`],
      [{ privacy: { service: justOver } }, `privacy.service: ${RULE}`],
      [{ city: "x".repeat(201) }, `city: ${RULE}`],
      [{ as_name: emoji(201) }, `/as_name: ${RULE}`],
      [{ as_name: "" }, `/as_name: ${RULE}`],
      [{ asn: 1, note: `${emoji(499)}xx` }, "note: 1 to 500 characters, not all spaces, without control characters"],
      [{ asn: 1, note: emoji(501) }, "/note: 1 to 500 characters, not all spaces, without control characters"],
    ];
    for (const [sent, detail] of refused) {
      const { status, body } = await put("2.2.2.0_24", sent);
      expect({ sent, status, code: body.code, detail: body.detail }).toEqual({ sent, status: 400, code: "invalid_request", detail });
    }
    expect(await t.store.listCorrections()).toEqual(before);
  });
});

describe("the command line counts characters", () => {
  const dir = mkdtempSync(join(tmpdir(), "iplookup-correction-texts-"));
  const state = join(dir, "state.db");
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("corrections set takes 200 emoji, refuses 201 with the rule", async () => {
    const set = await runCliInProcess(defaultDataPath(), ["corrections", "set", "9.9.9.0/24", "--as-name", emoji(101), "--service", emoji(200), "--state", state]);
    expect(set).toMatchObject({ code: 0, stderr: "" });
    const refused = await runCliInProcess(defaultDataPath(), ["corrections", "set", "9.9.9.0/24", "--as-name", emoji(201), "--state", state]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`--as-name: ${RULE}`);
  });
});
