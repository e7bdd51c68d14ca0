import { describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { join } from "node:path";
import { POSTGRES_SCHEMA_VERSION } from "../../src/store/postgres-schema.ts";
import { PostgresStore } from "../../src/store/postgres-store.ts";
import { hashSecret } from "../../src/store/secret.ts";
import { StateNotFoundError, StoreError, StoreRefusedError, StoreTimeoutError, StoreUnavailableError } from "../../src/store/store.ts";
import { databaseUrl, postgresAvailable, raw, testStates } from "../support/postgres.ts";
import { startTcpProxy } from "../support/tcp-proxy.ts";
import { downgradePostgres } from "./downgrade.ts";
import { postgresRawChanges } from "./raw-changes.ts";
import { storeSuite } from "./store-suite.ts";

const states = testStates();
const FIXTURES = join(import.meta.dir, "..", "fixtures", "store");
const PERIOD = "2026-11";


describe.skipIf(!postgresAvailable)("PostgresStore", () => {
  describe("the Store suite on PostgreSQL", () => {
    storeSuite({ fresh: states.fresh, open: (url, options) => PostgresStore.open(url, options), ...postgresRawChanges });
  });

  describe("opening", () => {
    test("creates the schema at the current version; opening again migrates nothing", async () => {
      const url = await states.fresh();
      await (await PostgresStore.open(url)).close();
      const [first] = await raw(url, (sql) => sql`SELECT version, xmin::text AS xmin FROM iplookup_schema`);
      expect(first.version).toBe(POSTGRES_SCHEMA_VERSION);
      await (await PostgresStore.open(url)).close();
      // The row was not written again: the same transaction id made it.
      expect((await raw(url, (sql) => sql`SELECT xmin::text AS xmin FROM iplookup_schema`))[0].xmin).toBe(first.xmin);
    });

    test("a database of schema version 6 gains the store's id, keeping its counter; a server of version 6 still running reads and moves the counter as before", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url);
      await store.createKey("old", "free");
      await store.close();
      await raw(url, (sql) => downgradePostgres(sql, 6));
      // The connection of a server of version 6, open across the migration, with its statements prepared before it.
      const old = new SQL(url, { max: 1 });
      try {
        const oldCounter = async () => Number((await old`SELECT value FROM generation WHERE id = 1`)[0].value);
        const probe = () => old`SELECT 1 AS taken FROM generation WHERE id = 1 FOR KEY SHARE`;
        const count = await oldCounter();
        expect(await probe()).toEqual([{ taken: 1 }]);
        const migrated = await PostgresStore.open(url);
        expect(await migrated.generation()).toEqual({ storeId: expect.stringMatching(/^[0-9a-f-]{36}$/), count });
        expect(await oldCounter()).toBe(count);
        expect(await probe()).toEqual([{ taken: 1 }]);
        // A key the old server creates moves the counter for both.
        await old`INSERT INTO keys (id, name, plan, secret_hash, created_at) VALUES ('key_aaaaaaaaaaaaaaaa', 'from 6', 'free', ${hashSecret("from 6")}, now())`;
        expect(await oldCounter()).toBe(count + 1);
        expect((await migrated.generation()).count).toBe(count + 1);
        await migrated.close();
      } finally {
        await old.close();
      }
    });

    test("six stores opening one empty database at the same moment migrate it once", async () => {
      const url = await states.fresh();
      const stores = await Promise.all(Array.from({ length: 6 }, () => PostgresStore.open(url)));
      expect(await stores[0]!.listPlans()).toHaveLength(3);
      // Seeding the plans is the only change so far: it ran once.
      for (const store of stores) expect((await store.generation()).count).toBe(1);
      await Promise.all(stores.map((store) => store.close()));
    });

    test("two processes opening one empty database at the same moment migrate it once", async () => {
      const url = await states.fresh();
      const script = `import { PostgresStore } from ${JSON.stringify(join(import.meta.dir, "..", "..", "src", "store", "postgres-store.ts"))};
        const store = await PostgresStore.open(process.argv[1]);
        process.stdout.write(String((await store.generation()).count));
        await store.close();`;
      const children = [0, 1].map(() => Bun.spawn([process.execPath, "-e", script, url], { stdout: "pipe", stderr: "pipe" }));
      expect(await Promise.all(children.map((child) => child.exited))).toEqual([0, 0]);
      expect(await Promise.all(children.map((child) => new Response(child.stdout).text()))).toEqual(["1", "1"]);
      expect((await raw(url, (sql) => sql`SELECT version FROM iplookup_schema`))[0].version).toBe(POSTGRES_SCHEMA_VERSION);
    });

    test("a database from a newer iplookup is refused, named without its password, and left alone", async () => {
      const url = await states.fresh();
      await (await PostgresStore.open(url)).close();
      await raw(url, (sql) => sql`UPDATE iplookup_schema SET version = ${POSTGRES_SCHEMA_VERSION + 1}`);
      const withPassword = new URL(url);
      withPassword.password = "pw-newer-schema";
      const error = await PostgresStore.open(withPassword.href).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StoreError);
      expect((error as Error).message).toContain(`has schema version ${POSTGRES_SCHEMA_VERSION + 1}, newer than this iplookup knows (${POSTGRES_SCHEMA_VERSION}); use a newer iplookup`);
      expect((error as Error).message).toContain(":***@");
      expect((error as Error).message).not.toContain("pw-newer-schema");
      expect((await raw(url, (sql) => sql`SELECT version FROM iplookup_schema`))[0].version).toBe(POSTGRES_SCHEMA_VERSION + 1);
    });

    test("a database holding other tables of those names is refused, and left alone", async () => {
      const url = await states.fresh();
      await raw(url, (sql) => sql`CREATE TABLE keys (k text)`);
      await expect(PostgresStore.open(url)).rejects.toThrow(/is not an iplookup database; use a database of its own/);
      const tables = await raw(url, (sql) => sql`SELECT relname FROM pg_class WHERE relkind = 'r' AND relnamespace = current_schema()::regnamespace`);
      expect(tables.map((row: { relname: string }) => row.relname)).toEqual(["keys"]);
    });

    test("create: false refuses a database without the schema and creates nothing; one with it opens", async () => {
      const url = await states.fresh();
      await expect(PostgresStore.open(url, { create: false })).rejects.toThrow(StateNotFoundError);
      expect((await raw(url, (sql) => sql`SELECT count(*)::int AS n FROM pg_class WHERE relnamespace = current_schema()::regnamespace`))[0].n).toBe(0);
      await (await PostgresStore.open(url)).close();
      const store = await PostgresStore.open(url, { create: false });
      expect(await store.listPlans()).toHaveLength(3);
      await store.close();
    });

    test("a database that does not exist is named without the password, with what to do", async () => {
      const url = databaseUrl("iplookup_test_no_such_database", { password: "pw-missing-db" });
      for (const create of [true, false]) {
        const error = await PostgresStore.open(url, { create }).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(Error);
        expect(error).not.toBeInstanceOf(StoreError);
        expect((error as Error).message).toBe(
          `${databaseUrl("iplookup_test_no_such_database", { password: "***" })}: there is no database "iplookup_test_no_such_database" on that server; create it first (createdb, or CREATE DATABASE)`,
        );
      }
    });

    test("a login the server refuses: StoreUnavailableError that says so and what to check, without the password", async () => {
      const url = new URL(await states.fresh());
      url.username = "iplookup_test_no_such_role";
      url.password = "pw-refused";
      const error = await PostgresStore.open(url.href).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      const label = url.href.replace("pw-refused", "***");
      expect((error as Error).message).toStartWith(`the state database at ${label} refused the login: `);
      expect((error as Error).message).toEndWith("; check the user and password in the URL (or PGPASSWORD)");
      expect(Bun.inspect(error)).not.toContain("pw-refused");
    });

    test("a server that cannot be reached: StoreUnavailableError at once, without the password", async () => {
      const url = "postgres://iplookup:pw-unreachable@127.0.0.1:1/iplookup";
      const started = performance.now();
      const error = await PostgresStore.open(url).catch((caught: unknown) => caught);
      expect(performance.now() - started).toBeLessThan(2000);
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect((error as Error).message).toStartWith("cannot reach the state database at postgres://iplookup:***@127.0.0.1:1/iplookup: ");
      expect(Bun.inspect(error)).not.toContain("pw-unreachable");
    });

    test("PGDATABASE in the environment does not move the store off the URL's database", async () => {
      const url = await states.fresh();
      const saved = process.env.PGDATABASE;
      process.env.PGDATABASE = "test";
      try {
        await (await PostgresStore.open(url)).close();
      } finally {
        if (saved === undefined) delete process.env.PGDATABASE;
        else process.env.PGDATABASE = saved;
      }
      expect((await raw(url, (sql) => sql`SELECT version FROM iplookup_schema`))[0].version).toBe(POSTGRES_SCHEMA_VERSION);
    });
  });

  describe("plans written by two servers at once", () => {
    test("a plan's first write that meets another writer's insert of the same name waits for it and is recorded as changing that plan, not as a second creation", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url);
      const other = new SQL(url, { max: 1 });
      let seenBefore: unknown = "not called";
      let written: Promise<unknown> | undefined;
      await other.begin(async (tx) => {
        await tx`INSERT INTO plans (name, max_batch_size, monthly_units, rate_limit) VALUES ('silver', 1, 1, 1)`;
        // The store's write meets the uncommitted row and waits for it to commit.
        written = store.setPlan("silver", { maxBatchSize: 5, monthlyUnits: 50, rateLimit: 2 }, (_after, before) => {
          seenBefore = before;
          return null;
        });
        await Bun.sleep(200);
        expect(seenBefore).toBe("not called");
      });
      expect(await written).toEqual({ name: "silver", maxBatchSize: 5, monthlyUnits: 50, rateLimit: 2 });
      expect(seenBefore).toEqual({ name: "silver", maxBatchSize: 1, monthlyUnits: 1, rateLimit: 1 });
      await other.close();
      await store.close();
    });
  });

  describe("keys and the change counter", () => {
    // Bun asks for DateStyle ISO when it connects; were it not so, times sent as text and
    // day::text would read 05/11/2026.
    test("times and days read the same whatever DateStyle and TimeZone the database sets", async () => {
      const url = await states.freshDatabase();
      const database = new URL(url).pathname.slice(1);
      await raw(databaseUrl("test"), async (sql) => {
        await sql.unsafe(`ALTER DATABASE ${database} SET datestyle TO 'SQL, DMY'`);
        await sql.unsafe(`ALTER DATABASE ${database} SET timezone TO 'America/New_York'`);
      });
      const store = await PostgresStore.open(url, { clock: () => new Date("2026-11-05T23:30:00.123Z") });
      const { key } = await store.createKey("k", "free");
      expect(key.createdAt).toBe("2026-11-05T23:30:00.123Z");
      expect(await store.listKeys()).toEqual([key]);
      await store.charge({ keyId: key.id, period: PERIOD, units: 3, limit: null, at: Date.parse("2026-11-05T23:59:59.999Z") });
      expect(await store.usageByDay("2026-11-01", "2026-11-30")).toEqual([{ day: "2026-11-05", requests: 1, units: 3 }]);
      const snapshot = await store.exportState();
      expect(snapshot.days).toEqual([{ keyId: key.id, day: "2026-11-05", requests: 1, units: 3, lastUsedAt: "2026-11-05T23:59:59.999Z" }]);
      expect(snapshot.keys[0]?.createdAt).toBe("2026-11-05T23:30:00.123Z");
      await store.close();
    });

    test("only the SHA-256 of a secret is stored", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url);
      const { key, secret } = await store.createKey("acme", "free");
      const rotated = (await store.rotateKey(key.id))!;
      await store.close();
      const dump = JSON.stringify(await raw(url, (sql) => sql`SELECT k.*, u.* FROM keys k LEFT JOIN usage u ON u.key_id = k.id`));
      expect(dump).toContain(hashSecret(rotated.secret));
      for (const leaked of [secret, secret.slice(4), rotated.secret, rotated.secret.slice(4)]) expect(dump).not.toContain(leaked);
    });

    test("moves once for each statement that changes keys or plans, whatever SQL it uses, and is announced", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url);
      const { key } = await store.createKey("k", "free");
      const announced: string[] = [];
      await raw(url, async (sql) => {
        const subscription = await sql.listen("iplookup_changes", (payload) => announced.push(payload));
        const cases: [string, number][] = [
          ["UPDATE plans SET rate_limit = 1 WHERE name = 'standard'", 1],
          ["INSERT INTO plans VALUES ('bronze', 1, 1, 1), ('silver', 1, 1, 1)", 1],
          ["UPDATE plans SET rate_limit = 2", 1],
          ["UPDATE plans SET rate_limit = 2 WHERE name = 'none'", 0],
          ["DELETE FROM plans WHERE name IN ('bronze', 'silver')", 1],
          [`UPDATE keys SET name = 'renamed' WHERE id = '${key.id}'`, 1],
          [`DELETE FROM keys WHERE id = '${key.id}'`, 1],
          [`DELETE FROM keys WHERE id = '${key.id}'`, 0],
          ["TRUNCATE keys CASCADE", 1],
        ];
        for (const [statement, moves] of cases) {
          const before = (await store.generation()).count;
          await sql.unsafe(statement);
          expect({ statement, moved: (await store.generation()).count - before }).toEqual({ statement, moved: moves });
        }
        const last = String((await store.generation()).count);
        for (let i = 0; i < 100 && !announced.includes(last); i++) await Bun.sleep(10);
        await subscription.unlisten();
      });
      expect(announced.at(-1)).toBe(String((await store.generation()).count));
      await store.close();
    });
  });

  describe("one statement for the keys whose charges all fit", () => {
    const AT = Date.parse("2026-11-20T10:00:00Z");
    const thresholdEvents = (url: string) =>
      raw(url, async (sql) => (await sql`SELECT once_key FROM webhook_events WHERE type = 'usage.threshold' ORDER BY once_key COLLATE "C"`).map((row: { once_key: string }) => row.once_key));

    test("each outcome counts the charges before it, and the day rows and last use match, as one at a time", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url, { chargeGroupsInFlight: 1 });
      const { key } = await store.createKey("k", "free");
      expect(await store.charge({ keyId: key.id, period: PERIOD, units: 2, limit: null, at: AT })).toEqual({ ok: true, used: 2 });
      // One turn: one group, its key far from the limit and from every line.
      const outcomes = await Promise.all(
        [1, 2, 3, 4].map((units, i) => store.charge({ keyId: key.id, period: PERIOD, units, limit: 1000, at: AT + 1000 * (i % 3) })),
      );
      expect(outcomes).toEqual([
        { ok: true, used: 3 },
        { ok: true, used: 5 },
        { ok: true, used: 8 },
        { ok: true, used: 12 },
      ]);
      expect(store.chargeStats).toEqual({ groups: 2, items: 5, quick: 5, quickTried: 5 });
      expect(await store.unitsUsed(key.id, PERIOD)).toBe(12);
      expect(await store.usageByDay("2026-11-20", "2026-11-20", key.id)).toEqual([{ day: "2026-11-20", requests: 5, units: 12 }]);
      expect((await store.keyActivity(PERIOD)).find((row) => row.keyId === key.id)?.lastUsedAt).toBe(new Date(AT + 2000).toISOString());
      expect(await thresholdEvents(url)).toEqual([]);
      await store.close();
    });

    test("several keys in one group, or one key's charges on two days, are granted in one statement as one at a time", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url, { chargeGroupsInFlight: 1 });
      const a = (await store.createKey("a", "free")).key;
      const b = (await store.createKey("b", "free")).key;
      const c = (await store.createKey("c", "free")).key;
      await store.charge({ keyId: a.id, period: PERIOD, units: 2, limit: null, at: AT });
      const keys = await Promise.all([
        store.charge({ keyId: a.id, period: PERIOD, units: 3, limit: 1000, at: AT }),
        store.charge({ keyId: b.id, period: PERIOD, units: 4, limit: null, at: AT }),
        store.charge({ keyId: a.id, period: PERIOD, units: 1, limit: 1000, at: AT + 1000 }),
        store.charge({ keyId: b.id, period: PERIOD, units: 5, limit: null, at: AT + 2000 }),
      ]);
      expect(keys).toEqual([
        { ok: true, used: 5 },
        { ok: true, used: 4 },
        { ok: true, used: 6 },
        { ok: true, used: 9 },
      ]);
      // A group across midnight: one key, two day rows.
      const days = await Promise.all([
        store.charge({ keyId: c.id, period: PERIOD, units: 2, limit: 1000, at: AT }),
        store.charge({ keyId: c.id, period: PERIOD, units: 3, limit: 1000, at: AT + 86_400_000 }),
      ]);
      expect(days).toEqual([
        { ok: true, used: 2 },
        { ok: true, used: 5 },
      ]);
      expect(store.chargeStats).toEqual({ groups: 3, items: 7, quick: 7, quickTried: 7 });
      expect(await store.usageByDay("2026-11-20", "2026-11-21", a.id)).toEqual([{ day: "2026-11-20", requests: 3, units: 6 }]);
      expect(await store.usageByDay("2026-11-20", "2026-11-21", b.id)).toEqual([{ day: "2026-11-20", requests: 2, units: 9 }]);
      expect(await store.usageByDay("2026-11-20", "2026-11-21", c.id)).toEqual([
        { day: "2026-11-20", requests: 1, units: 2 },
        { day: "2026-11-21", requests: 1, units: 3 },
      ]);
      const lastUse = async (id: string) => (await store.keyActivity(PERIOD)).find((row) => row.keyId === id)?.lastUsedAt;
      expect(await lastUse(b.id)).toBe(new Date(AT + 2000).toISOString());
      expect(await lastUse(c.id)).toBe(new Date(AT + 86_400_000).toISOString());
      await store.close();
    });

    test("a key at a line or its limit is decided one charge at a time, in the same group as keys granted at once", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url, { chargeGroupsInFlight: 1 });
      const near = (await store.createKey("near", "free")).key;
      const far = (await store.createKey("far", "free")).key;
      await store.charge({ keyId: near.id, period: PERIOD, units: 7, limit: 10, at: AT });
      const before = store.chargeStats.quick;
      const outcomes = await Promise.all([
        store.charge({ keyId: near.id, period: PERIOD, units: 1, limit: 10, at: AT }),
        store.charge({ keyId: far.id, period: PERIOD, units: 5, limit: 10, at: AT }),
        store.charge({ keyId: near.id, period: PERIOD, units: 5, limit: 10, at: AT }),
        store.charge({ keyId: near.id, period: PERIOD, units: 1, limit: 10, at: AT }),
        store.charge({ keyId: far.id, period: PERIOD, units: 2, limit: 10, at: AT }),
      ]);
      expect(outcomes).toEqual([
        { ok: true, used: 8 },
        { ok: true, used: 5 },
        { ok: false, used: 8 },
        { ok: true, used: 9 },
        { ok: true, used: 7 },
      ]);
      // Only far's two went in the statement: near's crossed 80% and 90%.
      expect(store.chargeStats.quick - before).toBe(2);
      expect(await thresholdEvents(url)).toEqual([`usage.threshold ${near.id} ${PERIOD} 80`, `usage.threshold ${near.id} ${PERIOD} 90`]);
      expect(await store.usageByDay("2026-11-20", "2026-11-20", near.id)).toEqual([{ day: "2026-11-20", requests: 3, units: 9 }]);
      expect(await store.usageByDay("2026-11-20", "2026-11-20", far.id)).toEqual([{ day: "2026-11-20", requests: 2, units: 7 }]);
      // far at 7 of 10: 8 crosses 80%, so it is decided one at a time, and its line recorded.
      expect(await store.charge({ keyId: far.id, period: PERIOD, units: 1, limit: 10, at: AT })).toEqual({ ok: true, used: 8 });
      expect(store.chargeStats.quick - before).toBe(2);
      expect(await thresholdEvents(url)).toContain(`usage.threshold ${far.id} ${PERIOD} 80`);
      await store.close();
    });

    test("a key the transaction refused for its limit skips the statement until the transaction grants it a charge again", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url, { chargeGroupsInFlight: 1 });
      const { key } = await store.createKey("k", "free");
      const charge = (units: number, limit: number) => store.charge({ keyId: key.id, period: PERIOD, units, limit, at: AT });
      expect(await charge(5, 1000)).toEqual({ ok: true, used: 5 });
      expect(store.chargeStats).toMatchObject({ quick: 1, quickTried: 1 });
      // At 5 of 6, a charge of 2 is refused: tried in the statement, then refused by the transaction.
      expect(await charge(2, 6)).toEqual({ ok: false, used: 5 });
      expect(store.chargeStats).toMatchObject({ quick: 1, quickTried: 2 });
      // Refused again, now without the statement.
      expect(await charge(2, 6)).toEqual({ ok: false, used: 5 });
      expect(store.chargeStats).toMatchObject({ quick: 1, quickTried: 2 });
      // A plan with more units: the transaction grants it, and the statement takes the key again.
      expect(await charge(2, 1000)).toEqual({ ok: true, used: 7 });
      expect(store.chargeStats).toMatchObject({ quick: 1, quickTried: 2 });
      expect(await charge(3, 1000)).toEqual({ ok: true, used: 10 });
      expect(store.chargeStats).toMatchObject({ quick: 2, quickTried: 3 });
      await store.close();
    });

    test("when the transaction fails after the statement committed, only the transaction's charges fail", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url, { chargeGroupsInFlight: 1, lockTimeoutMs: 200 });
      const quick = (await store.createKey("quick", "free")).key;
      const held = (await store.createKey("held", "free")).key;
      await store.charge({ keyId: held.id, period: PERIOD, units: 1, limit: null });
      await raw(url, async (sql) => {
        await sql.begin(async (tx) => {
          await tx`SELECT used FROM usage WHERE key_id = ${held.id} FOR UPDATE`;
          // A charge of no units is decided in the transaction, which waits for the lock.
          const settled = await Promise.allSettled([
            store.charge({ keyId: quick.id, period: PERIOD, units: 3, limit: null }),
            store.charge({ keyId: held.id, period: PERIOD, units: 0, limit: null }),
          ]);
          expect(settled[0]).toEqual({ status: "fulfilled", value: { ok: true, used: 3 } });
          expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
        });
      });
      expect(await store.unitsUsed(quick.id, PERIOD)).toBe(3);
      expect(await store.unitsUsed(held.id, PERIOD)).toBe(1);
      await store.close();
    });

    test("a row locked for long leaves its charges to the transaction, which charges nothing for a client gone meanwhile", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url, { chargeGroupsInFlight: 1 });
      const { key } = await store.createKey("k", "free");
      await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null });
      const before = store.chargeStats.quick;
      const client = new AbortController();
      let charge!: Promise<unknown>;
      await raw(url, (sql) =>
        sql.begin(async (tx) => {
          await tx`SELECT used FROM usage WHERE key_id = ${key.id} FOR UPDATE`;
          charge = store.charge({ keyId: key.id, period: PERIOD, units: 10, limit: null, signal: client.signal });
          await Bun.sleep(300);
          client.abort();
        }),
      );
      expect(await charge).toEqual({ ok: false, used: 1, gone: true });
      expect(store.chargeStats.quick).toBe(before);
      expect(await store.unitsUsed(key.id, PERIOD)).toBe(1);
      await store.close();
    });

    test("a key deleted while its charge waits for its row is found gone once the deletion commits; the group's other charge is granted", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url, { chargeGroupsInFlight: 1 });
      const kept = (await store.createKey("kept", "free")).key;
      const gone = (await store.createKey("gone", "free")).key;
      for (const key of [kept, gone]) await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null });
      let charges!: Promise<unknown[]>;
      await raw(url, (sql) =>
        sql.begin(async (tx) => {
          // The deletion holds the key's rows until it commits: the statement gives up the
          // wait, and the transaction, which still saw the key, waits for the row, then
          // finds its foreign key gone (23503) and is made again.
          await tx`DELETE FROM usage_days WHERE key_id = ${gone.id}`;
          await tx`DELETE FROM usage WHERE key_id = ${gone.id}`;
          await tx`DELETE FROM keys WHERE id = ${gone.id}`;
          charges = Promise.all([
            store.charge({ keyId: kept.id, period: PERIOD, units: 2, limit: null }),
            store.charge({ keyId: gone.id, period: PERIOD, units: 1, limit: null }),
          ]);
          await Bun.sleep(300);
        }),
      );
      expect(await charges).toEqual([
        { ok: true, used: 3 },
        { ok: false, used: 0, keyGone: true },
      ]);
      expect(await store.unitsUsed(kept.id, PERIOD)).toBe(3);
      expect(await raw(url, (sql) => sql`SELECT key_id FROM usage UNION ALL SELECT key_id FROM usage_days`)).toEqual([{ key_id: kept.id }, { key_id: kept.id }]);
      await store.close();
    });

    test("16 clients on two stores spend a limit exactly, each line recorded once, most charges in the statement", async () => {
      const url = await states.fresh();
      const servers = [await PostgresStore.open(url), await PostgresStore.open(url)] as const;
      const { key } = await servers[0].createKey("k", "free");
      const limit = 2_000;
      let granted = 0;
      const client = async (server: 0 | 1) => {
        while ((await servers[server].charge({ keyId: key.id, period: PERIOD, units: 1, limit })).ok) granted++;
      };
      await Promise.all(Array.from({ length: 16 }, (_, i) => client((i % 2) as 0 | 1)));
      expect(granted).toBe(limit);
      expect(await servers[0].unitsUsed(key.id, PERIOD)).toBe(limit);
      expect(await thresholdEvents(url)).toEqual([100, 80, 90].map((line) => `usage.threshold ${key.id} ${PERIOD} ${line}`));
      const quick = servers[0].chargeStats.quick + servers[1].chargeStats.quick;
      expect(quick).toBeGreaterThan(limit / 2);
      const [day] = await servers[0].usageByDay("2026-11-01", "2026-12-31", key.id).then((rows) => rows.filter((row) => row.units > 0));
      expect(day?.units).toBe(limit);
      await Promise.all(servers.map((server) => server.close()));
    });
  });

  // `pg_restore --clean` into the database of running servers, without
  // --single-transaction, commits each step on its own: it creates each table empty,
  // copies the rows in (the generation table's before the keys'), makes the identity
  // columns identities again in a step after their CREATE TABLE, and adds the primary and
  // unique keys last. The store refuses what it cannot do meanwhile, as it refuses
  // statements on a table gone (StoreRefusedError: 503, the server stays ready), writes
  // nothing, and serves again once the restore is done.
  describe("a restore under way (pg_restore --clean)", () => {
    test("a table whose primary key is not back yet (ON CONFLICT refused, 42P10): the charge is refused, nothing charged; it is charged once the key is back", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url);
      const { key } = await store.createKey("k", "free");
      await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null });
      await raw(url, (sql) => sql`ALTER TABLE usage DROP CONSTRAINT usage_pkey`);
      const refused = await store.charge({ keyId: key.id, period: PERIOD, units: 5, limit: null }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StoreRefusedError);
      expect((refused as Error).message).toStartWith(`the state database at ${url} refused a statement: there is no unique or exclusion constraint`);
      expect(await store.unitsUsed(key.id, PERIOD)).toBe(1);
      await raw(url, (sql) => sql`ALTER TABLE usage ADD PRIMARY KEY (key_id, period)`);
      expect(await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null })).toEqual({ ok: true, used: 2 });
      await store.close();
    });

    test("an identity column not yet an identity again (its null refused, 23502): the key is not created; it is once the column is an identity", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url);
      await raw(url, (sql) => sql`ALTER TABLE keys ALTER COLUMN seq DROP IDENTITY`);
      const refused = await store.createKey("k", "free").catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(StoreRefusedError);
      expect((refused as Error).message).toContain(`null value in column "seq" of relation "keys"`);
      expect(await store.listKeys()).toEqual([]);
      await raw(url, (sql) => sql`ALTER TABLE keys ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY`);
      const { key } = await store.createKey("k", "free");
      expect((await store.listKeys()).map((listed) => listed.id)).toEqual([key.id]);
      await store.close();
    });

    test("the change counter's row not copied back yet: its reads are refused, saying so; they read the row once it is back", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url);
      await store.createKey("k", "free");
      const before = await store.generation();
      await raw(url, (sql) => sql`DELETE FROM generation`);
      for (const read of [() => store.generation(), () => store.authSnapshot(), () => store.correctionSnapshot()]) {
        const refused = await read().catch((error: unknown) => error);
        expect(refused).toBeInstanceOf(StoreRefusedError);
        expect((refused as Error).message).toContain("has no change counter: its table generation has no row");
      }
      await raw(url, (sql) => sql`INSERT INTO generation (id, value, store_id) VALUES (1, ${before.count}, ${before.storeId})`);
      expect(await store.generation()).toEqual(before);
      expect((await store.authSnapshot()).keysByHash.size).toBe(1);
      expect((await store.correctionSnapshot()).generation).toEqual(before);
      await store.close();
    });
  });

  describe("charges across servers", () => {
    test("16 clients on two stores (two pools, as two servers) never overspend, grouped several to a commit", async () => {
      const url = await states.fresh();
      const servers = [await PostgresStore.open(url), await PostgresStore.open(url)] as const;
      const { key } = await servers[0].createKey("k", "free");
      const limit = 3_500;
      const units = 7;
      const granted: [number, number] = [0, 0];
      const client = async (server: 0 | 1) => {
        for (;;) {
          const outcome = await servers[server].charge({ keyId: key.id, period: PERIOD, units, limit });
          if (!outcome.ok) return;
          granted[server] += units;
        }
      };
      await Promise.all(Array.from({ length: 16 }, (_, i) => client((i % 2) as 0 | 1)));
      expect(granted[0]! + granted[1]!).toBe(limit);
      expect(await servers[1].unitsUsed(key.id, PERIOD)).toBe(limit);
      // Both servers charged, and their transactions carried several charges each.
      for (const [i, server] of servers.entries()) {
        expect(granted[i]).toBeGreaterThan(0);
        expect(server.chargeStats.items / server.chargeStats.groups).toBeGreaterThan(1.5);
      }
      await Promise.all(servers.map((server) => server.close()));
    });

    test("kill -9 while charging loses no acknowledged charge", async () => {
      const url = await states.fresh();
      const setup = await PostgresStore.open(url);
      const keyId = (await setup.createKey("k", "unlimited")).key.id;
      await setup.close();
      const child = Bun.spawn([process.execPath, join(FIXTURES, "charge-loop.ts"), url, keyId], { stdout: "pipe", stderr: "inherit" });
      const reader = child.stdout.getReader();
      const decoder = new TextDecoder();
      let output = "";
      // Until a few hundred charges were answered, then kill it in the middle of its work.
      while (output.split("\n").length < 300) {
        const chunk = await reader.read();
        if (chunk.done) break;
        output += decoder.decode(chunk.value, { stream: true });
      }
      child.kill("SIGKILL");
      expect(await child.exited).not.toBe(0);
      expect(child.signalCode).toBe("SIGKILL");
      for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) output += decoder.decode(chunk.value, { stream: true });
      // A line cut short by the kill can only be a smaller number: still a safe bound.
      const answered = Math.max(...output.split("\n").filter(Boolean).map(Number));
      expect(answered).toBeGreaterThanOrEqual(3 * 290);
      const reopened = await PostgresStore.open(url);
      expect(await reopened.unitsUsed(keyId, PERIOD)).toBeGreaterThanOrEqual(answered);
      await reopened.close();
    });

    test("a charge stuck behind another transaction's lock is rolled back at its time, never applied later; one still queued is never sent", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url, { chargeTimeoutMs: 300, chargeGroupsInFlight: 1 });
      const { key } = await store.createKey("k", "free");
      await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null });
      await raw(url, async (sql) => {
        await sql.begin(async (tx) => {
          await tx`SELECT used FROM usage WHERE key_id = ${key.id} FOR UPDATE`;
          const stuck = store.charge({ keyId: key.id, period: PERIOD, units: 10, limit: null });
          // Handled from the start: on a busy machine it may reject before allSettled below.
          stuck.catch(() => {});
          await Bun.sleep(20);
          // Queued behind the stuck group (one in flight at a time).
          const queued = store.charge({ keyId: key.id, period: PERIOD, units: 100, limit: null });
          const settled = await Promise.allSettled([stuck, queued]);
          for (const outcome of settled) expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StoreTimeoutError);
          // Answered 503 only once the database has rolled the group back: nothing of it
          // waits for the lock any more.
          const [waiting] = await tx`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'iplookup' AND wait_event_type = 'Lock'`;
          expect(waiting.n).toBe(0);
        });
      });
      // The lock is gone: neither charge was applied (CONTRACT §3: a 503 costs nothing).
      await Bun.sleep(50);
      expect(await store.unitsUsed(key.id, PERIOD)).toBe(1);
      expect(await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null })).toEqual({ ok: true, used: 2 });
      await store.close();
    });

    test("connections ended by the server: StoreUnavailableError, nothing charged, then the store reconnects by itself", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url);
      const { key } = await store.createKey("k", "free");
      await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null });
      const database = new URL(url).pathname.slice(1);
      await raw(url, async (sql) => {
        await sql.begin(async (tx) => {
          // The charge's transaction waits for this lock when its connection is ended.
          await tx`SELECT used FROM usage WHERE key_id = ${key.id} FOR UPDATE`;
          const cut = store.charge({ keyId: key.id, period: PERIOD, units: 5, limit: null }).catch((caught: unknown) => caught);
          await Bun.sleep(50);
          await raw(databaseUrl("test"), (admin) => admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database} AND application_name = 'iplookup'`);
          const error = await cut;
          expect(error).toBeInstanceOf(StoreUnavailableError);
          expect((error as Error).message).toStartWith(`the state database at ${url} cannot be reached: `);
        });
      });
      // Reads try a broken connection's statement once more, on a new one.
      expect(await store.unitsUsed(key.id, PERIOD)).toBe(1);
      // A charge is not tried again (its COMMIT may have gone through): it may meet
      // another connection the server ended, once, before a new one serves it.
      let outcome;
      for (let attempt = 0; attempt < 5 && !outcome; attempt++) {
        outcome = await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null }).catch((error: unknown) => {
          expect(error).toBeInstanceOf(StoreUnavailableError);
          return undefined;
        });
      }
      expect(outcome).toEqual({ ok: true, used: 2 });
      await store.close();
    });
    test("a database that refuses sessions (ALLOW_CONNECTIONS false, as for maintenance): StoreUnavailableError for reads and charges, nothing charged; allowed again, the store serves by itself", async () => {
      const url = await states.fresh();
      const store = await PostgresStore.open(url);
      const { key } = await store.createKey("k", "free");
      await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null });
      const database = new URL(url).pathname.slice(1);
      const admin = <T>(work: (sql: SQL) => Promise<T>) => raw(databaseUrl("test"), work);
      const refusedSession = (error: unknown) => /not currently accepting connections/.test((error as Error).message);
      await admin((sql) => sql.unsafe(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`));
      try {
        await admin((sql) => sql`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database}`);
        // The pools meet their ended connections first; then every new session is refused.
        const seen = { read: false, charge: false };
        for (let attempt = 0; attempt < 30 && !(seen.read && seen.charge); attempt++) {
          const read = await store.unitsUsed(key.id, PERIOD).catch((error: unknown) => error);
          expect(read).toBeInstanceOf(StoreUnavailableError);
          seen.read ||= refusedSession(read);
          const charged = await store.charge({ keyId: key.id, period: PERIOD, units: 5, limit: null }).catch((error: unknown) => error);
          expect(charged).toBeInstanceOf(StoreUnavailableError);
          seen.charge ||= refusedSession(charged);
        }
        expect(seen).toEqual({ read: true, charge: true });
      } finally {
        await admin((sql) => sql.unsafe(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`));
      }
      let used: number | undefined;
      for (let attempt = 0; attempt < 5 && used === undefined; attempt++) used = await store.unitsUsed(key.id, PERIOD).catch(() => undefined);
      expect(used).toBe(1);
      expect(await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null })).toEqual({ ok: true, used: 2 });
      await store.close();
    });

    test("the database taken away and given back: every call ends in time, nothing answered is lost, and the store recovers by itself", async () => {
      const url = new URL(await states.fresh());
      const proxy = await startTcpProxy({ hostname: url.hostname, port: Number(url.port || 5432) });
      url.port = String(proxy.port);
      const limit = 300;
      const store = await PostgresStore.open(url.href, { chargeTimeoutMs: limit, readTimeoutMs: limit, connectTimeoutSeconds: 1 });
      const { key } = await store.createKey("k", "unlimited");
      let phase = "normal";
      const answered = new Map<string, number>();
      let highest = 0;
      let slowest = 0;
      const failures: unknown[] = [];
      let running = true;
      const client = async (read: boolean) => {
        while (running) {
          const started = performance.now();
          try {
            if (read) await store.findActiveKey(hashSecret("ipl_nobody"));
            else highest = Math.max(highest, (await store.charge({ keyId: key.id, period: PERIOD, units: 1, limit: null })).used);
            answered.set(phase, (answered.get(phase) ?? 0) + 1);
          } catch (error) {
            failures.push(error);
            await Bun.sleep(20);
          }
          slowest = Math.max(slowest, performance.now() - started);
        }
      };
      const clients = [client(false), client(false), client(false), client(true)];
      const during = async (name: string, ms: number, act?: () => void) => {
        act?.();
        phase = name;
        await Bun.sleep(ms);
      };
      await during("normal", 200);
      await during("cut", 500, () => proxy.cut());
      await during("after the cut", 500, () => proxy.restore());
      await during("stalled", 700, () => proxy.stall());
      await during("after the stall", 500, () => proxy.restore());
      // The open connections go silent for good: the store gives up on them and connects anew.
      await during("forgotten", 1200, () => proxy.forget());
      await during("after forgetting", 500);
      running = false;
      await Promise.all(clients);
      for (const name of ["normal", "after the cut", "after the stall", "after forgetting"]) expect({ name, answered: (answered.get(name) ?? 0) > 0 }).toEqual({ name, answered: true });
      expect(failures.length).toBeGreaterThan(0);
      for (const error of failures) expect(error).toBeInstanceOf(StoreUnavailableError);
      // Each call ended within its time (and the scheduling slack of a busy machine).
      expect(slowest).toBeLessThan(limit + 400);
      expect(await store.unitsUsed(key.id, PERIOD)).toBeGreaterThanOrEqual(highest);
      await store.close();
      proxy.close();
    });
  });
});
