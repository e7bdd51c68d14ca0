import { expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { join } from "node:path";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { tempStatePaths } from "./temp-state.ts";

const freshPath = tempStatePaths();
const FIXTURES = join(import.meta.dir, "..", "fixtures", "store");

async function createKey(path: string, plan: string): Promise<string> {
  const store = SqliteStore.open(path);
  const { key } = await store.createKey("k", plan);
  await store.close();
  return key.id;
}

/** Reads a child's stdout until `done` says the text so far is enough. */
async function readUntil(reader: { read(): Promise<{ done: boolean; value?: Uint8Array }> }, done: (text: string) => boolean): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  while (!done(text)) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  return text;
}

test("kill -9 while charging loses no acknowledged charge and leaves the file sound", async () => {
  const path = freshPath();
  const keyId = await createKey(path, "unlimited");
  const child = Bun.spawn([process.execPath, join(FIXTURES, "charge-loop.ts"), path, keyId], { stdout: "pipe", stderr: "inherit" });
  const reader = child.stdout.getReader();
  let output = await readUntil(reader, (text) => text.includes("\n"));
  await Bun.sleep(300);
  child.kill("SIGKILL");
  expect(await child.exited).not.toBe(0);
  expect(child.signalCode).toBe("SIGKILL");
  output += await readUntil(reader, () => false);

  // A line cut short by the kill can only be a smaller number: still a safe bound.
  const acknowledged = Math.max(...output.split("\n").filter(Boolean).map(Number));
  expect(acknowledged).toBeGreaterThan(100);
  const db = new Database(path);
  expect(db.query("PRAGMA integrity_check").all()).toEqual([{ integrity_check: "ok" }]);
  expect(db.query("PRAGMA foreign_key_check").all()).toEqual([]);
  db.close();
  const reopened = SqliteStore.open(path);
  expect(await reopened.unitsUsed(keyId, "2026-11")).toBeGreaterThanOrEqual(acknowledged);
  await reopened.close();
});

test("two processes charging one key at once never overspend its quota", async () => {
  const path = freshPath();
  const keyId = await createKey(path, "free");
  const limit = 3_500;
  const units = 7;
  const children = [0, 1].map(() =>
    Bun.spawn([process.execPath, join(FIXTURES, "charge-until-refused.ts"), path, keyId, String(limit), String(units)], { stdin: "pipe", stdout: "pipe", stderr: "inherit" }),
  );
  const readers = children.map((child) => child.stdout.getReader());
  // Both have the file open before either charges, so their charging overlaps.
  for (const reader of readers) expect(await readUntil(reader, (text) => text.includes("\n"))).toBe("ready\n");
  for (const child of children) {
    child.stdin.write("go\n");
    await child.stdin.end();
  }
  const reports = await Promise.all(readers.map(async (reader) => JSON.parse(await readUntil(reader, () => false)) as { granted: number; interleaved: number }));
  expect(await Promise.all(children.map((child) => child.exited))).toEqual([0, 0]);

  const store = SqliteStore.open(path);
  const used = await store.unitsUsed(keyId, "2026-11");
  await store.close();
  expect(used).toBe(Math.floor(limit / units) * units);
  expect(reports[0]!.granted + reports[1]!.granted).toBe(used);
  // The processes really took turns on the file, rather than one running after the other.
  expect(reports[0]!.interleaved + reports[1]!.interleaved).toBeGreaterThan(0);
});

test("two processes opening one new state file at once both open it, and both keys stay", async () => {
  for (let round = 0; round < 30; round++) {
    const path = freshPath();
    const at = String(Date.now() + 250);
    const children = [0, 1].map(() => Bun.spawn([process.execPath, join(FIXTURES, "open-at.ts"), path, at], { stdout: "pipe", stderr: "inherit" }));
    const lines = await Promise.all(children.map(async (child) => (await new Response(child.stdout).text()).trim()));
    expect(lines.map((line) => line.split(" ")[0])).toEqual(["ok", "ok"]);
    const db = new Database(path, { readonly: true });
    const keys = db.query<{ id: string }, []>("SELECT id FROM keys ORDER BY id").all().map((row) => row.id);
    db.close();
    expect(keys).toEqual(lines.map((line) => line.split(" ")[1]!).sort());
  }
}, 60_000);
