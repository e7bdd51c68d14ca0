import { afterAll, expect, test } from "bun:test";
import { KEPT_RESPONSE_BYTES, sendMessage, wholeCharacters } from "../../src/events/send.ts";

/**
 * A receiver's answer is kept to its first KEPT_RESPONSE_BYTES (CONTRACT §16), cut at a
 * character's end: what is kept is at most that many bytes as UTF-8, and holds no
 * replacement character the cut made.
 */
let answer = new Uint8Array();
const receiver = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(answer, { status: 500 }) });
afterAll(() => receiver.stop(true));

const message = () => ({ url: `http://127.0.0.1:${receiver.port}/hook`, secret: "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0", id: "msg_cut", body: "{}" });
const bytes = (text: string) => new TextEncoder().encode(text);
const utf8Length = (text: string) => bytes(text).byteLength;

test("an answer whose byte 256 is inside a character keeps the characters before it, and no U+FFFD", async () => {
  for (const [character, before] of [["é", 255], ["€", 254], ["€", 255], ["😀", 253], ["😀", 254], ["😀", 255]] as const) {
    answer = bytes(`${"a".repeat(before)}${character}${"z".repeat(40)}`);
    const { response } = await sendMessage(message(), Date.now());
    expect({ character, before, response }).toEqual({ character, before, response: "a".repeat(before) });
    expect(utf8Length(response!)).toBeLessThanOrEqual(KEPT_RESPONSE_BYTES);
  }
});

test("an answer cut at a character's end, or shorter than the limit, is kept as it came", async () => {
  for (const text of [`${"a".repeat(254)}é${"z".repeat(10)}`, `${"é".repeat(128)}more`, "short é € 😀"]) {
    answer = bytes(text);
    const { response } = await sendMessage(message(), Date.now());
    const kept = new TextDecoder().decode(bytes(text).subarray(0, KEPT_RESPONSE_BYTES));
    expect(response).toBe(kept);
    expect(response).not.toContain("\ufffd");
  }
  // A receiver's own invalid UTF-8 is its own, and still shown replaced.
  answer = new Uint8Array([0x6f, 0x6b, 0xff, 0x21]);
  expect((await sendMessage(message(), Date.now())).response).toBe("ok\ufffd!");
});

test("wholeCharacters leaves out only a sequence cut short at the end", () => {
  expect(wholeCharacters(bytes("abc"))).toBe(3);
  expect(wholeCharacters(bytes("ab€").subarray(0, 4))).toBe(2);
  expect(wholeCharacters(bytes("ab€"))).toBe(5);
  expect(wholeCharacters(bytes("😀").subarray(0, 3))).toBe(0);
  expect(wholeCharacters(new Uint8Array([0x61, 0x80, 0x80, 0x80, 0x80]))).toBe(5); // no UTF-8: as it is
  expect(wholeCharacters(new Uint8Array())).toBe(0);
});
