import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { hashSecret, newKeyId, newSecret, SECRET_LENGTH, SECRET_PREFIX } from "../../src/store/secret.ts";

test("a secret is ipl_ and 32 random bytes in base64url", () => {
  const secrets = Array.from({ length: 1000 }, newSecret);
  for (const secret of secrets) {
    expect(secret).toMatch(/^ipl_[A-Za-z0-9_-]{43}$/);
    expect(secret).toHaveLength(SECRET_LENGTH);
    expect(Buffer.from(secret.slice(SECRET_PREFIX.length), "base64url")).toHaveLength(32);
  }
  expect(new Set(secrets).size).toBe(secrets.length);
});

test("a key id is key_ and 16 base32 characters, each used", () => {
  const ids = Array.from({ length: 1000 }, newKeyId);
  for (const id of ids) expect(id).toMatch(/^key_[a-z2-7]{16}$/);
  expect(new Set(ids).size).toBe(ids.length);
  const characters = new Set(ids.join("").replaceAll("key_", ""));
  expect(characters.size).toBe(32);
});

test("hashSecret is the lower-case hex SHA-256 of the UTF-8 text", () => {
  for (const input of ["", "ipl_abc", newSecret(), "ipl_é€😀"]) {
    expect(hashSecret(input)).toBe(createHash("sha256").update(input, "utf8").digest("hex"));
  }
  expect(hashSecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
});

test("hashSecret is fast enough to run on every request", () => {
  const secrets = Array.from({ length: 100 }, newSecret);
  const started = performance.now();
  for (let i = 0; i < 100_000; i++) hashSecret(secrets[i % 100]!);
  // ~15 ms on a 2-core machine; the bound leaves room for a loaded one.
  expect(performance.now() - started).toBeLessThan(1000);
});
