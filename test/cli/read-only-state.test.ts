import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { defaultDataPath } from "../../src/config/paths.ts";
import { billingPeriod } from "../../src/store/period.ts";
import { SCHEMA_VERSION } from "../../src/store/schema.ts";
import { POSTGRES_SCHEMA_VERSION } from "../../src/store/postgres-schema.ts";
import { redactUrl } from "../../src/store/redact-url.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { cliAsOtherUser, giveToOtherUser, otherUserRuns } from "../support/other-user.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { cli } from "../support/server-process.ts";
import { downgradePostgres, downgradeSqlite } from "../store/downgrade.ts";

/**
 * The commands that only read the state change nothing of a SQLite state file: not its
 * bytes, not its schema version, not its journal mode, and no -wal or -shm is left beside
 * it. So a backup taken before an upgrade stays one the older iplookup opens, however
 * often the new one looked at it, and a backup made read-only can still be looked at and
 * copied from. They used to migrate the file in place and switch it to WAL.
 */

const root = mkdtempSync(join(tmpdir(), "iplookup-read-only-"));
chmodSync(root, 0o755);
afterAll(() => rmSync(root, { recursive: true, force: true }));
let count = 0;

/** A new folder, and the path of a state file in it (not created). */
function freshState(): string {
  const folder = join(root, `f${++count}`);
  mkdirSync(folder, { mode: 0o755 });
  return join(folder, "state.db");
}

function run(...args: string[]) {
  return runCliInProcess(defaultDataPath(), args);
}

async function ok(...args: string[]): Promise<string> {
  const result = await run(...args);
  expect(result).toMatchObject({ code: 0, stderr: "" });
  return result.stdout;
}

/** The file's bytes (as a hash) and every file in its folder. */
function look(path: string): { hash: string; folder: string[] } {
  return { hash: new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex"), folder: readdirSync(dirname(path)).sort() };
}

/** The schema version in the file's header, read without SQLite (which makes files beside it). */
const userVersion = (path: string) => readFileSync(path).readUInt32BE(60);
/** Bytes 18 and 19 of the header: 2 in WAL mode, 1 in rollback-journal mode. */
const walHeader = (path: string) => readFileSync(path)[18] === 2;

const PERIOD = billingPeriod(new Date()).id;

/**
 * A state as the commands of an iplookup of schema `version` leave it (WAL mode, nothing
 * beside it): a plan of its own, two keys with usage this month, an admin token, a
 * correction of 8.8.8.0/24, a webhook, and the audit log of it all. Answers its path and the keys' ids.
 */
async function olderState(version: number): Promise<{ path: string; acme: string; beta: string }> {
  const path = freshState();
  await ok("plans", "set", "gold", "--max-batch", "50", "--monthly-units", "5000", "--rate-limit", "20", "--state", path);
  const acme = JSON.parse(await ok("keys", "create", "--name", "acme", "--plan", "gold", "--json", "--state", path)).id as string;
  const beta = JSON.parse(await ok("keys", "create", "--name", "beta", "--json", "--state", path)).id as string;
  await ok("admin", "create", "--name", "ops", "--state", path);
  await ok("corrections", "set", "8.8.8.0/24", "--country", "AU", "--note", "ours", "--state", path);
  await ok("webhooks", "add", "http://127.0.0.1:9/hook", "--events", "usage.threshold", "--state", path);
  const store = SqliteStore.open(path);
  await store.charge({ keyId: acme, period: PERIOD, units: 1200, limit: 5000 });
  await store.charge({ keyId: beta, period: PERIOD, units: 7, limit: 100_000 });
  await store.close();
  const db = new Database(path);
  downgradeSqlite(db, version);
  db.close();
  expect(readdirSync(dirname(path))).toEqual(["state.db"]);
  expect(walHeader(path)).toBe(true);
  return { path, acme, beta };
}

const previous = SCHEMA_VERSION - 1;
const state = await olderState(previous);

describe("commands that only read a state of the previous schema leave it byte for byte as it was, and answer right", () => {
  const { path } = state;
  const before = look(path);

  test.each([
    ["keys list", ["keys", "list", "--json"], (out: string) => expect(JSON.parse(out).map((key: { name: string; plan: string }) => `${key.name}:${key.plan}`)).toEqual(["acme:gold", "beta:free"])],
    ["plans list", ["plans", "list", "--json"], (out: string) => expect(JSON.parse(out).map((plan: { name: string }) => plan.name)).toEqual(["free", "gold", "standard", "unlimited"])],
    ["usage", ["usage", "--json"], (out: string) => expect(JSON.parse(out).map((report: { units: { used: number } }) => report.units.used)).toEqual([1200, 7])],
    ["usage ID", ["usage", state.acme, "--json"], (out: string) => expect(JSON.parse(out).units.used).toBe(1200)],
    ["audit", ["audit", "--json"], (out: string) =>
      expect(JSON.parse(out).entries.map((entry: { action: string }) => entry.action)).toEqual(["webhook.created", "correction.created", "admin_token.created", "key.created", "key.created", "plan.created"])],
    ["admin list", ["admin", "list", "--json"], (out: string) => expect(JSON.parse(out).map((token: { name: string }) => token.name)).toEqual(["ops"])],
    ["corrections list", ["corrections", "list", "--json"], (out: string) => expect(JSON.parse(out).map((correction: { cidr: string }) => correction.cidr)).toEqual(["8.8.8.0/24"])],
    ["webhooks list", ["webhooks", "list", "--json"], (out: string) => expect(JSON.parse(out).map((hook: { url: string }) => hook.url)).toEqual(["http://127.0.0.1:9/hook"])],
    ["lookup --state", ["lookup", "8.8.8.8"], (out: string) => expect(JSON.parse(out).country_code).toBe("AU")],
    ["asn --state", ["asn", "15169"], (out: string) => expect(out).toContain("15169")],
  ] as const)("%s", async (_name, args, check) => {
    check(await ok(...args, "--state", path));
    expect(look(path)).toEqual(before);
    expect(userVersion(path)).toBe(previous);
  });

  test("webhooks deliveries", async () => {
    const [first] = JSON.parse(await ok("webhooks", "list", "--json", "--state", path)) as { id: string }[];
    expect(JSON.parse(await ok("webhooks", "deliveries", first!.id, "--json", "--state", path))).toEqual([]);
    expect(look(path)).toEqual(before);
  });

  test("state copy --from it copies all of it into a new state, and leaves it as it was", async () => {
    const copy = join(dirname(freshState()), "copy.db");
    expect(await ok("state", "copy", "--from", path, "--to", copy)).toContain("2 keys");
    expect(look(path)).toEqual(before);
    expect(userVersion(path)).toBe(previous);
    expect(userVersion(copy)).toBe(SCHEMA_VERSION);
    expect(JSON.parse(await ok("usage", "--json", "--state", copy)).map((report: { key: { name: string }; units: { used: number } }) => [report.key.name, report.units.used])).toEqual([
      ["acme", 1200],
      ["beta", 7],
    ]);
    expect(JSON.parse(await ok("corrections", "list", "--json", "--state", copy))).toHaveLength(1);
    expect(JSON.parse(await ok("webhooks", "list", "--json", "--state", copy))).toHaveLength(1);
    expect(JSON.parse(await ok("admin", "list", "--json", "--state", copy))).toHaveLength(1);
  });

  test("state copy --to it, without --replace, refuses as it holds keys, and leaves it as it was (not migrated first)", async () => {
    const source = join(dirname(freshState()), "source.db");
    await ok("keys", "create", "--name", "other", "--state", source);
    const result = await run("state", "copy", "--from", source, "--to", path);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${path} holds 2 keys and 1 correction already`);
    expect(look(path)).toEqual(before);
    expect(userVersion(path)).toBe(previous);
  });

  test("a command that changes it still migrates it, as a server of this version does", async () => {
    await ok("keys", "create", "--name", "gamma", "--state", path);
    expect(userVersion(path)).toBe(SCHEMA_VERSION);
  });
});

describe("a read-only copy of the state can be listed and copied from, and is left as it was", () => {
  /** A state file made mode 0444: a backup (rollback journal), or a copy of the state file itself (WAL mode). */
  async function readOnlyCopy(kind: "backup" | "state file"): Promise<string> {
    const state = freshState();
    await ok("keys", "create", "--name", "acme", "--state", state);
    const target = join(dirname(state), "ro.db");
    if (kind === "backup") await ok("backup", target, "--state", state);
    else {
      const db = new Database(state, { readonly: true });
      db.run(`VACUUM INTO '${target}'`);
      db.close();
      const copy = new Database(target);
      copy.run("PRAGMA journal_mode = WAL");
      copy.close();
    }
    rmSync(state);
    chmodSync(target, 0o444);
    expect(walHeader(target)).toBe(kind === "state file");
    return target;
  }

  describe.skipIf(!otherUserRuns)("as a user who may only read it", () => {
    test.each(["backup", "state file"] as const)("a %s", async (kind) => {
      const target = await readOnlyCopy(kind);
      // The folder is this user's, who could create a -wal and -shm there.
      giveToOtherUser(dirname(target));
      const before = look(target);
      const home = join(dirname(target), "home");
      mkdirSync(home);
      giveToOtherUser(home);
      const env = { HOME: home, IPLOOKUP_STATE: "" };
      const listed = cli(["keys", "list", "--json", "--state", target], env, cliAsOtherUser);
      expect(listed.stderr).toBe("");
      expect(JSON.parse(listed.stdout).map((key: { name: string }) => key.name)).toEqual(["acme"]);
      const copy = join(dirname(target), "copy.db");
      const copied = cli(["state", "copy", "--from", target, "--to", copy], env, cliAsOtherUser);
      expect(copied.stderr).toBe("");
      expect(copied.code).toBe(0);
      expect(look(target).hash).toBe(before.hash);
      expect(readdirSync(dirname(target)).filter((file) => file.startsWith("ro.db"))).toEqual(["ro.db"]);
      expect(walHeader(target)).toBe(kind === "state file");
      expect(JSON.parse(cli(["keys", "list", "--json", "--state", copy], env, cliAsOtherUser).stdout)).toHaveLength(1);
    });
  });

  test.each(["backup", "state file"] as const)("a %s, by a user the permissions refuse nothing (root) or its owner", async (kind) => {
    const target = await readOnlyCopy(kind);
    const before = look(target);
    expect(JSON.parse(await ok("keys", "list", "--json", "--state", target))).toHaveLength(1);
    const copy = join(dirname(target), "copy.db");
    await ok("state", "copy", "--from", target, "--to", copy);
    expect(readdirSync(dirname(target)).filter((file) => file.startsWith("ro.db"))).toEqual(["ro.db"]);
    expect(look(target).hash).toBe(before.hash);
    expect(walHeader(target)).toBe(kind === "state file");
    expect(JSON.parse(await ok("keys", "list", "--json", "--state", copy))).toHaveLength(1);
  });
});

describe.skipIf(!postgresAvailable)("on PostgreSQL, which every server of a fleet shares", () => {
  const states = testStates();
  async function schemaVersion(url: string): Promise<number> {
    const sql = new SQL(url, { max: 1 });
    try {
      return Number((await sql`SELECT version FROM iplookup_schema`)[0].version);
    } finally {
      await sql.close();
    }
  }

  test("a command that only reads refuses a database of the previous schema (exit 1), which stays at its version; one that changes the state migrates it", async () => {
    const url = await states.fresh();
    await ok("keys", "create", "--name", "acme", "--state", url);
    const sql = new SQL(url, { max: 1 });
    await downgradePostgres(sql, POSTGRES_SCHEMA_VERSION - 1);
    await sql.close();
    const refusal = `iplookup: ${redactUrl(url)} has schema version ${POSTGRES_SCHEMA_VERSION - 1}, older than this iplookup's (${POSTGRES_SCHEMA_VERSION}); a command that only reads does not upgrade it. A server of this version, or any command that changes the state (keys create, plans set, …), upgrades it, after which servers of older versions are refused at start\n`;
    for (const args of [["keys", "list"], ["plans", "list"], ["usage"], ["audit"], ["webhooks", "list"], ["lookup", "8.8.8.8"]]) {
      expect(await run(...args, "--state", url)).toEqual({ code: 1, stdout: "", stderr: refusal });
    }
    const copy = join(dirname(freshState()), "copy.db");
    expect(await run("state", "copy", "--from", url, "--to", copy)).toEqual({ code: 1, stdout: "", stderr: refusal });
    expect(readdirSync(dirname(copy))).toEqual([]);
    expect(await schemaVersion(url)).toBe(POSTGRES_SCHEMA_VERSION - 1);
    await ok("keys", "create", "--name", "beta", "--state", url);
    expect(await schemaVersion(url)).toBe(POSTGRES_SCHEMA_VERSION);
    expect(JSON.parse(await ok("keys", "list", "--json", "--state", url)).map((key: { name: string }) => key.name)).toEqual(["acme", "beta"]);
  });
});
