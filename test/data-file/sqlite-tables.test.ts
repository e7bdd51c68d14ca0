import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sqliteTableNames } from "../../src/data-file/sqlite-tables.ts";
import { SCHEMA } from "../../src/data-file/layout.ts";
import { migrate } from "../../src/store/schema.ts";

/**
 * sqliteTableNames reads a SQLite file's tables from its own schema pages: the same
 * names SQLite lists, for a one-page schema, one spread over interior and leaf pages, a
 * row overflowing its page and a UTF-16 file; null for a file that is not SQLite; and
 * an Error (never a hang or another throw) for any damage to the first page.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-sqlite-tables-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function made(name: string, sql: string, pragmas: string[] = []): string {
  const path = join(dir, name);
  const db = new Database(path, { create: true });
  for (const pragma of pragmas) db.run(pragma);
  db.run(sql);
  db.close();
  return path;
}

/** A state file's schema, as iplookup makes it. */
function stateFile(name: string): string {
  const path = join(dir, name);
  const db = new Database(path, { create: true });
  migrate(db, path);
  db.close();
  return path;
}

function sqliteSays(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return db
      .query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite%' ORDER BY name")
      .all()
      .map((row) => row.name);
  } finally {
    db.close();
  }
}

test.each([
  ["a data file's schema", () => made("data.db", SCHEMA)],
  ["a state file's schema (several pages)", () => stateFile("state.db")],
  ["many tables, one with a definition longer than a page", () => made("many.db", [...Array.from({ length: 300 }, (_, i) => `CREATE TABLE t${i} (a INTEGER, b TEXT)`), `CREATE TABLE long (${Array.from({ length: 900 }, (_, i) => `column_${i} TEXT`).join(", ")})`].join(";\n"), ["PRAGMA page_size = 512"])],
  ["UTF-16", () => made("utf16.db", "CREATE TABLE meta (a); CREATE TABLE blobs (b); CREATE TABLE \"données\" (c)", ["PRAGMA encoding = 'UTF-16le'"])],
  ["AUTOINCREMENT (sqlite_sequence left out)", () => made("seq.db", "CREATE TABLE counted (id INTEGER PRIMARY KEY AUTOINCREMENT)")],
])("%s: as SQLite lists them", (_name, make) => {
  const path = make();
  expect(sqliteTableNames(path)).toEqual(sqliteSays(path));
});

test("a file that does not begin as SQLite's: null", () => {
  const path = join(dir, "text.csv");
  writeFileSync(path, "1.0.0.0,1.0.0.255,13335,Cloudflare\n");
  expect(sqliteTableNames(path)).toBeNull();
  writeFileSync(path, "SQLite");
  expect(sqliteTableNames(path)).toBeNull();
});

test("damage anywhere in the first page: the names, or an Error", () => {
  const original = readFileSync(stateFile("damaged.db"));
  const path = join(dir, "damage.db");
  let random = 12345;
  const next = () => (random = (random * 1103515245 + 12345) % 2 ** 31) >>> 12; // the high bits: an LCG's low bits repeat
  for (let round = 0; round < 2000; round++) {
    const bytes = Buffer.from(original);
    // The first page's header and cell pointers come first; its cells fill it from the end.
    for (let flips = 1 + (next() % 4); flips > 0; flips--) bytes[next() % 2 === 0 ? next() % 256 : 4095 - (next() % 1024)] = next() % 256;
    writeFileSync(path, round % 7 === 0 ? bytes.subarray(0, next() % bytes.byteLength) : bytes);
    try {
      const names = sqliteTableNames(path);
      expect(names === null || Array.isArray(names)).toBe(true);
    } catch (error) {
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toMatch(/^its /);
    }
  }
  expect(readdirSync(dir)).not.toContain("damage.db-wal");
});
