import { expect, test } from "bun:test";
import { keyJson } from "../../src/access/key-json.ts";
import type { ApiKey } from "../../src/store/store.ts";

const rotated: ApiKey = { id: "key_abcdefghijklmnop", name: "acme", plan: "free", createdAt: "2026-11-01T00:00:00.000Z", revokedAt: null, graceUntil: "2026-11-29T10:00:00.000Z" };

test("grace_until: the rotation's grace while the key is active; a revocation during it ends it then", () => {
  expect(keyJson(rotated).grace_until).toBe("2026-11-29T10:00:00.000Z");
  expect(keyJson({ ...rotated, revokedAt: "2026-11-29T09:00:00.000Z" }).grace_until).toBe("2026-11-29T09:00:00.000Z");
  // Revoked after the grace had run out: the grace as it was.
  expect(keyJson({ ...rotated, revokedAt: "2026-11-30T00:00:00.000Z" }).grace_until).toBe("2026-11-29T10:00:00.000Z");
  expect(keyJson({ ...rotated, graceUntil: undefined, revokedAt: "2026-11-30T00:00:00.000Z" }).grace_until).toBeNull();
});
