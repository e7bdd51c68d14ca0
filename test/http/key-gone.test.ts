/**
 * A key deleted from the state store behind the servers' backs (`state copy --replace`,
 * psql, sqlite3) while a key cache still holds it: its requests answer 401 invalid_key
 * and cost nothing, the other keys' requests charged with them are answered as if it
 * had not been there, nothing is logged as unhandled, and the cache reloads at once
 * rather than on the next poll. On a SQLite file and on PostgreSQL (skipped when it
 * cannot be reached), through app.handle.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyCache } from "../../src/access/key-cache.ts";
import { createApp } from "../../src/http/app.ts";
import { createLogger } from "../../src/log/logger.ts";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import type { Store } from "../../src/store/store.ts";
import { defaultIndex } from "../support/default-data.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { postgresRawChanges, sqliteRawChanges, type RawChanges } from "../store/raw-changes.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-key-gone-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const states = testStates();
const PERIOD = "2026-11";

interface Kind extends RawChanges {
  location(): Promise<string>;
  open(location: string): Promise<Store>;
}

const kinds: [string, boolean, Kind][] = [
  ["a SQLite file", true, { location: async () => join(dir, `${crypto.randomUUID()}.db`), open: async (path) => SqliteStore.open(path), ...sqliteRawChanges }],
  ["PostgreSQL", postgresAvailable, { location: () => states.fresh(), open: (url) => PostgresStore.open(url), ...postgresRawChanges }],
];

for (const [name, available, kind] of kinds) {
  describe.skipIf(!available)(`a key gone from ${name} while the key cache holds it`, () => {
    test("answers 401 invalid_key, costs nothing; the other key's lookups in the same commit are answered and charged", async () => {
      const location = await kind.location();
      const store = await kind.open(location);
      const kept = await store.createKey("kept", "free");
      const gone = await store.createKey("gone", "free");
      const keys = await KeyCache.load(store);
      const lines: string[] = [];
      const index = defaultIndex();
      const app = createApp({ store, keys, index: () => index, clock: { now: () => new Date("2026-11-15T12:00:00Z") }, logger: createLogger("debug", (line) => lines.push(line)) });
      const lookup = (secret: string, ips = ["8.8.8.8", "1.1.1.1"]) =>
        app.handle(
          new Request("http://iplookup.test/v1/lookup/batch", {
            method: "POST",
            headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
            body: JSON.stringify({ ips }),
          }),
        );
      expect((await Promise.all([lookup(kept.secret), lookup(gone.secret)])).map((response) => response.status)).toEqual([200, 200]);

      // No poll here: the cache holds both keys until something makes it reload.
      await kind.deleteKey(location, gone.key.id);
      expect(keys.authenticate(gone.secret)?.key.id).toBe(gone.key.id);
      // Sent in one turn: their charges are committed as one group.
      const responses = await Promise.all([lookup(kept.secret), lookup(gone.secret), lookup(kept.secret, ["9.9.9.9"])]);
      expect(responses.map((response) => response.status)).toEqual([200, 401, 200]);
      const refused = responses[1]!;
      expect(await refused.json()).toMatchObject({ code: "invalid_key", status: 401 });
      expect(refused.headers.get("www-authenticate")).toBe('Bearer realm="iplookup", error="invalid_token", error_description="the API key is unknown or revoked"');
      expect(responses[0]!.headers.get("x-units-remaining")).toBe(String(100_000 - 4));
      expect(responses[2]!.headers.get("x-units-remaining")).toBe(String(100_000 - 5));
      expect(await store.unitsUsed(kept.key.id, PERIOD)).toBe(5);
      expect(await store.unitsUsed(gone.key.id, PERIOD)).toBe(0);
      expect(lines.filter((line) => line.includes("unhandled"))).toEqual([]);

      // The cache reloaded at once: the gone key is unknown to it, and its next request is
      // refused before anything is charged.
      for (let i = 0; i < 100 && keys.authenticate(gone.secret) !== null; i++) await Bun.sleep(10);
      expect(keys.authenticate(gone.secret)).toBeNull();
      expect(keys.authenticate(kept.secret)?.key.id).toBe(kept.key.id);
      const again = await lookup(gone.secret);
      expect(again.status).toBe(401);
      expect(((await again.json()) as { code: string }).code).toBe("invalid_key");
      expect(lines.filter((line) => line.includes("unhandled"))).toEqual([]);
      await store.close();
    });
  });
}
