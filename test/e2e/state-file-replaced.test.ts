/**
 * CONTRACT §12: a SQLite state file removed or replaced under a running server (its -wal
 * and -shm removed, the file removed, another state moved over it). The server says so in
 * one line, answers charges and admin changes 503 store_unavailable and /readyz 503 from
 * then on, charges nothing into a file nobody will read, and leaves the files as they are
 * when it stops: what the CLI wrote meanwhile is kept, and a state moved into place is
 * read as it is, not through the old state's -wal.
 */
import { Database } from "bun:sqlite";
import { afterAll, afterEach, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";

const root = mkdtempSync(join(tmpdir(), "iplookup-replaced-"));
let count = 0;
let server: ServerProcess | undefined;
afterEach(async () => {
  await server?.stop("SIGKILL");
  server = undefined;
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CHANGED = "the state file was removed or replaced while the server runs";

/** A new folder with a state file holding one key; the key's secret and id. */
function stateWithKey(name: string, state = join(root, `s${++count}`, "state.db")) {
  mkdirSync(join(state, ".."), { recursive: true });
  const made = cli(["keys", "create", "--name", name, "--plan", "unlimited", "--json", "--state", state]);
  expect(made.code).toBe(0);
  const { id, key } = JSON.parse(made.stdout) as { id: string; key: string };
  return { state, id, key };
}

function lookup(secret: string): Promise<Response> {
  return fetch(`${server!.url}/v1/lookup`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: '{"ip":"1.1.1.1"}',
  });
}

/** Waits (at most five seconds) for /readyz to answer 503; answers its last status. */
async function readyzTurns503(): Promise<number> {
  let status = 0;
  for (const until = performance.now() + 5000; performance.now() < until; await Bun.sleep(50)) {
    status = (await fetch(`${server!.url}/readyz`)).status;
    if (status === 503) break;
  }
  return status;
}

/** The lines of the server's log that say the state file changed. */
function changedLines(): string[] {
  return server!
    .stderr()
    .split("\n")
    .filter((line) => line.includes(CHANGED));
}

function escaped(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function integrity(state: string): string {
  const db = new Database(state, { readonly: true });
  try {
    return (db.query("PRAGMA integrity_check").get() as { integrity_check: string }).integrity_check;
  } finally {
    db.close();
  }
}

function rowCount(state: string, table: string): number {
  const db = new Database(state, { readonly: true });
  try {
    return (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  } finally {
    db.close();
  }
}

function keyIds(state: string): string[] {
  const listed = cli(["keys", "list", "--json", "--state", state]);
  expect(listed.code).toBe(0);
  return (JSON.parse(listed.stdout) as { id: string }[]).map((key) => key.id);
}

test("the -wal and -shm removed, then a key made with the CLI: 503 from then on, one line, and the key is kept when the server stops", async () => {
  const a = stateWithKey("a");
  const token = (JSON.parse(cli(["admin", "create", "--name", "ops", "--json", "--state", a.state]).stdout) as { token: string }).token;
  server = await startServerProcess(["--state", a.state, "--workers", "2", "--admin-port", "0", "--log-level", "warn"]);
  const admin = /"admin":"([^"]+)"/.exec(server.stderr())![1]!.replace(/\/$/, "");
  expect((await lookup(a.key)).status).toBe(200);
  // Copied into the state file by the server's checkpoints (every half second): what
  // the -wal held but not yet the file goes with it.
  await Bun.sleep(1200);

  rmSync(`${a.state}-wal`);
  rmSync(`${a.state}-shm`);
  const b = cli(["keys", "create", "--name", "b", "--plan", "unlimited", "--json", "--state", a.state]);
  expect(b.code).toBe(0);
  const { id: bId, key: bKey } = JSON.parse(b.stdout) as { id: string; key: string };

  expect(await readyzTurns503()).toBe(503);
  // Each thread finds it at its own poll of the change counter, every 250 ms.
  await Bun.sleep(600);
  // Every thread refuses to charge, for either key, with nothing charged.
  for (const secret of [a.key, bKey, a.key, bKey]) {
    const answer = await lookup(secret);
    expect(answer.status).toBe(503);
    expect(((await answer.json()) as { code: string }).code).toBe("store_unavailable");
  }
  const madeByAdmin = await fetch(`${admin}/admin/v1/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: '{"name":"c"}',
  });
  expect(madeByAdmin.status).toBe(503);
  const lines = changedLines();
  expect(lines).toHaveLength(1);
  // Removed, or replaced already by the CLI's when the thread looked.
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: "error", state: a.state });
  expect(JSON.parse(lines[0]!).error).toMatch(new RegExp(`^${escaped(a.state)}-wal and ${escaped(a.state)}-shm were (removed|replaced by other files) while in use$`));
  expect(lines[0]).toContain("iplookup state copy --replace");

  expect(await server.stop("SIGTERM")).toBe(0);
  server = undefined;
  // The server's close took neither the CLI's -wal nor its key.
  expect(keyIds(a.state)).toEqual([a.id, bId]);
  expect(integrity(a.state)).toBe("ok");
  const usage = JSON.parse(cli(["usage", a.id, "--json", "--state", a.state]).stdout) as { units: { used: number } };
  expect(usage.units.used).toBe(1);
}, 60_000);

test("the state file removed: charges answer 503, not 200, and its old -wal and -shm go with it", async () => {
  const a = stateWithKey("a");
  server = await startServerProcess(["--state", a.state, "--log-level", "warn"]);
  expect((await lookup(a.key)).status).toBe(200);

  rmSync(a.state);
  expect(await readyzTurns503()).toBe(503);
  expect((await lookup(a.key)).status).toBe(503);
  expect(JSON.parse(changedLines()[0]!)).toMatchObject({ error: `${a.state} was removed while in use` });

  expect(await server.stop("SIGTERM")).toBe(0);
  server = undefined;
  // Nothing left that a state made at the path later would be read through.
  for (const file of [a.state, `${a.state}-wal`, `${a.state}-shm`]) expect(existsSync(file)).toBe(false);
}, 60_000);

test("another state moved over the file: 503 and the line, and the state moved in is read as it is", async () => {
  const a = stateWithKey("a");
  const other = stateWithKey("other");
  server = await startServerProcess(["--state", a.state, "--log-level", "warn"]);
  expect((await lookup(a.key)).status).toBe(200);

  renameSync(other.state, a.state);
  expect(await readyzTurns503()).toBe(503);
  expect((await lookup(a.key)).status).toBe(503);
  expect((await lookup(other.key)).status).toBe(503);
  expect(JSON.parse(changedLines()[0]!)).toMatchObject({ error: `${a.state} was replaced by another file while in use` });

  expect(await server.stop("SIGTERM")).toBe(0);
  server = undefined;
  // Not read through the old state's -wal: intact, with its own key alone and no usage
  // (the old state's pages, the unit charged to `a`, are not read into it).
  expect(integrity(a.state)).toBe("ok");
  expect(keyIds(a.state)).toEqual([other.id]);
  expect(rowCount(a.state, "usage") + rowCount(a.state, "usage_days")).toBe(0);
}, 60_000);
