import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkInstallTarget } from "../../src/importer/install-target.ts";
import { geoLite2AsnMmdb } from "../support/download-fixtures.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { cli } from "../support/server-process.ts";

/**
 * `data import --data PATH` (and `data update`) replaces only what may be an iplookup
 * data file: nothing, an empty file, or a SQLite file with a data file's tables, damaged
 * or of an older format. Anything else (the state file, a source of the import, a CSV,
 * an MMDB, another SQLite file, a folder) is refused with exit 2 before anything is
 * downloaded or built, naming the path and what it is, and is left byte for byte.
 */
const root = mkdtempSync(join(tmpdir(), "iplookup-install-target-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const CSV = "1.0.0.0,1.0.0.255,13335,Cloudflare\n";
let count = 0;
/** A folder of its own for each case, so that what an import leaves beside its target shows. */
function folder(): string {
  const dir = join(root, `case-${++count}`);
  mkdirSync(dir);
  return dir;
}

function sourceIn(dir: string): string {
  const source = join(dir, "six.csv");
  writeFileSync(source, CSV);
  return source;
}

/** A data file imported from a one-row CSV. */
function dataFileIn(dir: string, name = "data.db"): string {
  const path = join(dir, name);
  const result = cli(["data", "import", "--data", path, "--format", "asn-csv", sourceIn(dir)]);
  expect(result.code).toBe(0);
  return path;
}

function expectRefused(result: { code: number; stderr: string }, path: string, message: RegExp, dir: string, others: readonly string[]) {
  expect(result.stderr).toMatch(message);
  expect(result.stderr).toContain(path);
  expect(result.code).toBe(2);
  // Nothing beside it: no lock, no downloads' folder, no file written under a temporary name.
  expect(readdirSync(dir).sort()).toEqual([...others].sort());
}

describe("refused, left as it was, exit 2", () => {
  test("the state file given as --data: named as such, with --state; its keys survive", () => {
    const dir = folder();
    const state = join(dir, "state.db");
    expect(cli(["keys", "create", "--name", "kept", "--state", state]).code).toBe(0);
    const before = readFileSync(state);
    const source = sourceIn(dir);
    const result = cli(["data", "import", "--data", state, "--format", "asn-csv", source]);
    expectRefused(result, state, /is an iplookup state file \(keys, plans and usage\), not a data file; it is left as it is\. --state names the state file/, dir, ["state.db", "six.csv"]);
    expect(readFileSync(state).equals(before)).toBe(true);
    expect(JSON.parse(cli(["keys", "list", "--json", "--state", state]).stdout)).toMatchObject([{ name: "kept" }]);
  });

  test("before anything is downloaded: a URL source that cannot be reached changes nothing of the answer", () => {
    const dir = folder();
    const state = join(dir, "state.db");
    expect(cli(["keys", "create", "--name", "kept", "--state", state]).code).toBe(0);
    const result = cli(["data", "import", "--data", state, "--format", "asn-csv", "http://127.0.0.1:9/six.csv"]);
    expectRefused(result, state, /is an iplookup state file/, dir, ["state.db"]);
  });

  test("the import's own source, by its name or by a hard link to it; a CSV that is not a source", () => {
    const dir = folder();
    const source = sourceIn(dir);
    const same = cli(["data", "import", "--data", source, "--format", "asn-csv", source]);
    expectRefused(same, source, /is one of the sources the new data file is built from/, dir, ["six.csv"]);
    const link = join(dir, "link.csv");
    linkSync(source, link);
    const linked = cli(["data", "import", "--data", link, "--format", "asn-csv", source]);
    expectRefused(linked, link, /is one of the sources the new data file is built from \(.*six\.csv\)/, dir, ["six.csv", "link.csv"]);
    const other = join(dir, "other.csv");
    writeFileSync(other, CSV);
    const csv = cli(["data", "import", "--data", other, "--format", "asn-csv", source]);
    expectRefused(csv, other, /is not an iplookup data file: it is not a SQLite file but by its contents a source to import \(format asn-csv/, dir, ["six.csv", "link.csv", "other.csv"]);
    expect(readFileSync(source, "utf8")).toBe(CSV);
    expect(readFileSync(other, "utf8")).toBe(CSV);
  });

  test("--with-default onto the default data file: it is a source too", async () => {
    const dir = folder();
    const data = dataFileIn(dir);
    const before = readFileSync(data);
    const result = await runCliInProcess(data, ["data", "import", "--with-default", "--format", "asn-csv", join(dir, "six.csv")]);
    expectRefused(result, data, /is one of the sources the new data file is built from/, dir, ["data.db", "six.csv"]);
    expect(readFileSync(data).equals(before)).toBe(true);
  });

  test("data update: a recorded source that has become the data file itself", () => {
    const dir = folder();
    const data = dataFileIn(dir);
    const source = join(dir, "six.csv");
    rmSync(source);
    linkSync(data, source);
    const before = readFileSync(data);
    const result = cli(["data", "update", "--data", data]);
    expectRefused(result, data, /is one of the sources the new data file is built from/, dir, ["data.db", "six.csv"]);
    expect(readFileSync(data).equals(before)).toBe(true);
  });

  test.each([
    ["an MMDB", (path: string) => writeFileSync(path, geoLite2AsnMmdb()), /is not an iplookup data file: it is not a SQLite file but by its contents a source to import \(format mmdb/],
    ["a file of other bytes", (path: string) => writeFileSync(path, new Uint8Array(4096).fill(7)), /is not an iplookup data file: it is not a SQLite file; it is left as it is/],
    [
      "another program's SQLite file",
      (path: string) => {
        const db = new Database(path, { create: true });
        db.run("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')");
        db.close();
      },
      /is a SQLite file but not an iplookup data file \(its tables: notes\)/,
    ],
    [
      "a SQLite header on a first page that is not one",
      (path: string) => writeFileSync(path, Buffer.concat([Buffer.from("SQLite format 3\0"), Buffer.alloc(8192, 0xff)])),
      /is a SQLite file whose tables cannot be read \(.*\), so it cannot be told to be an iplookup data file; .*If it is a damaged data file, remove it/,
    ],
  ])("%s", (_name, make, message) => {
    const dir = folder();
    const target = join(dir, "target.db");
    make(target);
    const before = readFileSync(target);
    const result = cli(["data", "import", "--data", target, "--format", "asn-csv", sourceIn(dir)]);
    expectRefused(result, target, message, dir, ["target.db", "six.csv"]);
    expect(readFileSync(target).equals(before)).toBe(true);
  });

  test("a symbolic link to the state file: the file it leads to is judged", () => {
    const dir = folder();
    const state = join(dir, "state.db");
    expect(cli(["keys", "create", "--name", "kept", "--state", state]).code).toBe(0);
    const link = join(dir, "data.db");
    symlinkSync(state, link);
    const result = cli(["data", "import", "--data", link, "--format", "asn-csv", sourceIn(dir)]);
    expectRefused(result, state, /is an iplookup state file/, dir, ["state.db", "data.db", "six.csv"]);
  });

  test("a folder, and a path under a file: named before anything is made", () => {
    const dir = folder();
    const source = sourceIn(dir);
    const folderResult = cli(["data", "import", "--data", dir, "--format", "asn-csv", source]);
    expectRefused(folderResult, dir, /is a folder, not a data file: --data names the data file itself \(e\.g\. .*\/iplookup-data\.db\)/, dir, ["six.csv"]);
    for (const under of [join(source, "x.db"), join(source, "a", "b", "x.db")]) {
      const result = cli(["data", "import", "--data", under, "--format", "asn-csv", source]);
      expectRefused(result, under, new RegExp(`cannot write the data file .*: ${source.replace(/[.]/g, "\\.")} is a file, not a folder`), dir, ["six.csv"]);
    }
    expect(readFileSync(source, "utf8")).toBe(CSV);
  });

  test("a state file in WAL mode whose tables are still only in its -wal: its own pages declare none", () => {
    const dir = folder();
    const state = join(dir, "state.db");
    const db = new Database(state, { create: true });
    try {
      db.run("PRAGMA journal_mode = WAL");
      db.run("PRAGMA wal_autocheckpoint = 0");
      db.run("CREATE TABLE plans (name TEXT); CREATE TABLE keys (id TEXT); CREATE TABLE usage (id TEXT)");
      expect(() => checkInstallTarget(state, [])).toThrow(`${state} is a SQLite file but not an iplookup data file (its tables: none)`);
    } finally {
      db.close();
    }
  });

  test("a state file's -wal, empty after a checkpoint, and its -shm and -journal, there or not: named as what they are", () => {
    const dir = folder();
    const state = join(dir, "state.db");
    const db = new Database(state, { create: true });
    try {
      db.run("PRAGMA journal_mode = WAL");
      db.run("CREATE TABLE plans (name TEXT)");
      db.run("PRAGMA wal_checkpoint(TRUNCATE)");
      expect(readFileSync(`${state}-wal`).byteLength).toBe(0);
      const before = readdirSync(dir).sort();
      const source = sourceIn(dir);
      const result = cli(["data", "import", "--data", `${state}-wal`, "--format", "asn-csv", source]);
      expectRefused(result, `${state}-wal`, /state\.db-wal is the write-ahead log of the SQLite file .*state\.db, not a data file: it is left as it is/, dir, [...before, "six.csv"]);
      expect(readFileSync(`${state}-wal`).byteLength).toBe(0);
      expect(() => checkInstallTarget(`${state}-shm`, [])).toThrow(`${state}-shm is the shared memory file of the SQLite file ${state}, not a data file`);
      expect(() => checkInstallTarget(`${state}-journal`, [])).toThrow(`${state}-journal is the rollback journal of the SQLite file ${state}, not a data file`);
    } finally {
      db.close();
    }
    // state copy does not write a state there either.
    const copied = cli(["state", "copy", "--from", join(dir, "nothing.db"), "--to", `${state}-wal`]);
    expect(copied.stderr).toContain(`--to: ${state}-wal is the write-ahead log of the SQLite file ${state}, not a state file`);
    expect(copied.code).toBe(2);
    // Beside a file that is not SQLite, such a name is a name like another.
    expect(() => checkInstallTarget(join(dir, "six.csv-wal"), [])).not.toThrow();
  });
});

test("the folders an import made for its data file go when it fails", () => {
  const dir = folder();
  const bad = join(dir, "bad.csv");
  writeFileSync(bad, "1.0.0.9,1.0.0.1,13335,Backwards\n");
  const result = cli(["data", "import", "--data", join(dir, "new", "sub", "data.db"), "--format", "asn-csv", bad]);
  expect(result.stderr).toContain("bad.csv:1");
  expect(result.code).toBe(1);
  expect(readdirSync(dir)).toEqual(["bad.csv"]);
});

describe("replaced: what may be an iplookup data file", () => {
  function importsOver(path: string, dir: string) {
    const result = cli(["data", "import", "--data", path, "--format", "asn-csv", sourceIn(dir)]);
    expect(result.stderr).not.toContain("iplookup:");
    expect(result.code).toBe(0);
    expect(cli(["data", "info", "--json", "--data", path]).code).toBe(0);
  }

  test("nothing there, and an empty file", () => {
    const dir = folder();
    importsOver(join(dir, "new.db"), dir);
    writeFileSync(join(dir, "empty.db"), "");
    importsOver(join(dir, "empty.db"), dir);
  });

  test("a data file, damaged in its tables or cut short", () => {
    const dir = folder();
    const damaged = dataFileIn(dir, "damaged.db");
    const db = new Database(damaged);
    db.run("UPDATE blobs SET bytes = zeroblob(length(bytes)) WHERE name = 'v4_starts'");
    db.close();
    expect(cli(["data", "info", "--data", damaged]).stderr).toContain("damaged");
    importsOver(damaged, dir);

    const cut = dataFileIn(dir, "cut.db");
    truncateSync(cut, 8192);
    expect(cli(["data", "info", "--data", cut]).code).toBe(2);
    importsOver(cut, dir);
  });

  test("a data file of an older format (iplookup-data-1's tables)", () => {
    const dir = folder();
    const old = join(dir, "old.db");
    const db = new Database(old, { create: true });
    db.run(`
      CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE sources (position INTEGER PRIMARY KEY, name TEXT NOT NULL, package TEXT NOT NULL, version TEXT NOT NULL);
      CREATE TABLE records (id INTEGER PRIMARY KEY, asn INTEGER, as_name TEXT, country_code TEXT, country TEXT);
      CREATE TABLE blobs (name TEXT PRIMARY KEY, bytes BLOB NOT NULL);
      INSERT INTO meta VALUES ('format', 'iplookup-data-1');
    `);
    db.close();
    expect(cli(["data", "info", "--data", old]).stderr).toContain("iplookup-data-1");
    importsOver(old, dir);
  });

});
