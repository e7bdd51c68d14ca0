import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newWebhookSecret, signedHeaders } from "../../src/events/signature.ts";

/** The verification code of docs/webhooks.md, run as it is written, on a signed message. */
const dir = mkdtempSync(join(tmpdir(), "iplookup-guide-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("the guide's verify() accepts a delivery as iplookup signs it, and refuses a tampered or stale one", async () => {
  const guide = readFileSync(join(import.meta.dir, "..", "..", "docs", "webhooks.md"), "utf8");
  const code = /```ts\n([\s\S]*?)```/.exec(guide)![1]!;
  writeFileSync(join(dir, "verify.ts"), `${code}\nexport { verify };\n`);
  const { verify } = (await import(join(dir, "verify.ts"))) as { verify: (secret: string, headers: Headers, body: string) => boolean };
  const secret = newWebhookSecret();
  const body = '{"type":"key.created","timestamp":"2026-11-25T08:00:00.000Z","data":{"key":{"id":"key_a","name":"a","plan":"free"}}}';
  const now = Math.floor(Date.now() / 1000);
  const headers = new Headers(signedHeaders(secret, "msg_abc", now, body));
  expect(verify(secret, headers, body)).toBe(true);
  expect(verify(secret, headers, body.replace("free", "paid"))).toBe(false);
  expect(verify(newWebhookSecret(), headers, body)).toBe(false);
  expect(verify(secret, new Headers(signedHeaders(secret, "msg_abc", now - 3600, body)), body)).toBe(false);
});
