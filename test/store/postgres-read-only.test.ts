import { describe, expect, test } from "bun:test";
import { POSTGRES_SCHEMA_VERSION } from "../../src/store/postgres-schema.ts";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { redactUrl } from "../../src/store/redact-url.ts";
import { OlderSchemaError, StateNotFoundError, StoreError } from "../../src/store/store.ts";
import { postgresAvailable, raw, testStates } from "../support/postgres.ts";
import { downgradePostgres } from "./downgrade.ts";

/**
 * PostgresStore.open with `readOnly` (commands that only read) changes nothing in the
 * database. A database of an older schema is not migrated by them: that would lock every
 * server of the older version out at its next start, which only a server of this
 * version, or a command that changes the state, may do.
 */

const states = testStates();
const PERIOD = "2026-11";


const schemaVersion = (url: string) => raw(url, async (sql) => Number((await sql`SELECT version FROM iplookup_schema`)[0].version));

/** A state with a key and usage; answers the key's id. */
async function populate(url: string): Promise<string> {
  const store = await PostgresStore.open(url);
  try {
    const { key } = await store.createKey("acme", "free");
    await store.charge({ keyId: key.id, period: PERIOD, units: 12, limit: 100_000 });
    return key.id;
  } finally {
    await store.close();
  }
}

describe.skipIf(!postgresAvailable)("PostgresStore.open with readOnly", () => {
  test("a database of the previous schema is refused with OlderSchemaError and left at its version; opened to change it, it is migrated", async () => {
    const url = await states.fresh();
    await populate(url);
    const previous = POSTGRES_SCHEMA_VERSION - 1;
    await raw(url, (sql) => downgradePostgres(sql, previous));
    const label = redactUrl(url);
    const refused = PostgresStore.open(url, { readOnly: true });
    await expect(refused).rejects.toThrow(OlderSchemaError);
    await expect(refused).rejects.toThrow(
      `${label} has schema version ${previous}, older than this iplookup's (${POSTGRES_SCHEMA_VERSION}); a command that only reads does not upgrade it. A server of this version, or any command that changes the state (keys create, plans set, …), upgrades it, after which servers of older versions are refused at start`,
    );
    expect(await schemaVersion(url)).toBe(previous);
    await (await PostgresStore.open(url, { create: false })).close();
    expect(await schemaVersion(url)).toBe(POSTGRES_SCHEMA_VERSION);
  });

  test("a database of the current schema is read; a write fails in the read-only session, and changes nothing", async () => {
    const url = await states.fresh();
    const id = await populate(url);
    const store = await PostgresStore.open(url, { readOnly: true });
    try {
      expect((await store.listKeys()).map((key) => key.name)).toEqual(["acme"]);
      expect(await store.unitsUsed(id, PERIOD)).toBe(12);
      expect((await store.exportState()).keys).toHaveLength(1);
      await expect(store.createKey("more", "free")).rejects.toThrow(/read-only transaction/);
      expect((await store.listKeys()).map((key) => key.name)).toEqual(["acme"]);
    } finally {
      await store.close();
    }
  });

  test("a database without iplookup's schema is refused with StateNotFoundError, and none is created", async () => {
    const url = await states.fresh();
    await expect(PostgresStore.open(url, { readOnly: true })).rejects.toThrow(StateNotFoundError);
    expect(await raw(url, (sql) => sql`SELECT relname FROM pg_class WHERE relname = 'iplookup_schema' AND relnamespace = current_schema()::regnamespace`)).toEqual([]);
  });

  test("a database of a newer iplookup is refused, as it is when opened to change it", async () => {
    const url = await states.fresh();
    await populate(url);
    await raw(url, (sql) => sql`UPDATE iplookup_schema SET version = ${POSTGRES_SCHEMA_VERSION + 1}`);
    await expect(PostgresStore.open(url, { readOnly: true })).rejects.toThrow(StoreError);
    expect(await schemaVersion(url)).toBe(POSTGRES_SCHEMA_VERSION + 1);
  });
});
