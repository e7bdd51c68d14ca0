import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { CHECKSUMS_KEY, checksumsOf } from "../../src/data-file/checksums.ts";
import { readRecipe } from "../../src/data-file/recipe.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { writeDataFile } from "../../src/importer/data-file.ts";
import { LiveIndex } from "../../src/index/live-index.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { cli } from "../support/server-process.ts";
import { writeSmallSources } from "../support/small-dataset.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-damaged-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let path = "";
let pristine: Uint8Array;
let addresses: string[] = [];
let answers: string[] = [];

/** The index of a data file held in memory, as the compiled binary loads its embedded file. */
function load(bytes: Uint8Array): RangeIndex {
  return RangeIndex.fromDatabase(Database.deserialize(bytes));
}

/** Every answer the index gives for `addresses`, each checked to be valid JSON. */
function answersOf(index: RangeIndex): string[] {
  return addresses.map((text) => {
    const hit = index.lookup(parseAddress(text)!);
    const body = hit === null ? `{${new TextDecoder().decode(index.notFoundBytes)}` : `{"network":"${hit.network}",${hit.membersJson}`;
    JSON.parse(body); // throws on invalid JSON
    return body;
  });
}

function refused(bytes: Uint8Array, reason: RegExp): void {
  expect(() => load(bytes)).toThrow(reason);
}

/** The offset of `text` in the file, which must hold it exactly once. */
function offsetOf(bytes: Uint8Array, text: string): number {
  const buffer = Buffer.from(bytes);
  const at = buffer.indexOf(text);
  expect(at).toBeGreaterThanOrEqual(0);
  expect(buffer.indexOf(text, at + 1)).toBe(-1);
  return at;
}

function withByte(bytes: Uint8Array, at: number, value: number): Uint8Array {
  const copy = bytes.slice();
  copy[at] = value;
  return copy;
}

beforeAll(async () => {
  const sources = writeSmallSources(dir, {
    // A second data row, so the values table has a record to damage that no other shares.
    "asn-4.csv": ['16777216,16777471,13335,"Cloudflare, Inc."', "134744064,134744319,15169,Google LLC"].join("\n"),
  });
  path = join(dir, "data.db");
  writeDataFile(path, await buildDataSet(sources, new Date("2026-11-01T00:00:00Z")));
  pristine = new Uint8Array(readFileSync(path));
  const index = load(pristine);
  // Every segment's first and last address, and the addresses either side.
  const set = new Set<string>();
  for (const family of [4, 6] as const) {
    for (const [start, end] of index.segments(family)) {
      for (const value of [start, end]) set.add(text(family, value));
    }
  }
  addresses = [...set];
  answers = answersOf(index);
});

function text(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 255n)).join(".");
  const groups: string[] = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((value >> shift) & 0xffffn).toString(16));
  return groups.join(":");
}

describe("a damaged data file is refused", () => {
  test("an undamaged file loads, from disk and from bytes", () => {
    expect(RangeIndex.open(path).info.records).toBeGreaterThan(0);
    expect(answersOf(load(pristine))).toEqual(answers);
  });

  test("a stored value changed: Cloudflare → Xloudflare", () => {
    refused(withByte(pristine, offsetOf(pristine, "Cloudflare, Inc."), "X".charCodeAt(0)), /the data file is damaged: its values:as_name table does not match/);
  });

  test("a quote character of a stored value changed, which would make answers invalid JSON", () => {
    const at = offsetOf(pristine, '"Google LLC"');
    refused(withByte(pristine, at, "x".charCodeAt(0)), /values:as_name table does not match/);
    refused(withByte(pristine, at + '"Google LLC'.length, "\\".charCodeAt(0)), /values:as_name table does not match/);
  });

  test("a segment table changed", () => {
    const db = Database.deserialize(pristine);
    const starts = db.query<{ bytes: Uint8Array }, []>("SELECT bytes FROM blobs WHERE name = 'v4_starts'").get()!.bytes;
    db.close();
    const at = Buffer.from(pristine).indexOf(Buffer.from(starts));
    expect(at).toBeGreaterThan(0);
    refused(withByte(pristine, at + 5, pristine[at + 5]! ^ 1), /its v4_starts table does not match/);
  });

  test("the data version, the sources and the meta rows are covered too", () => {
    const version = RangeIndex.open(path).info.dataVersion;
    const at = offsetOf(pristine, version);
    refused(withByte(pristine, at + version.length - 1, version.endsWith("0") ? 49 : 48), /its meta table does not match/);
    refused(withByte(pristine, offsetOf(pristine, "CC BY 4.0") + 3, "b".charCodeAt(0)), /its sources table does not match/);
  });

  test("single-byte damage anywhere is refused, or changes nothing an answer holds", () => {
    let refusedCount = 0;
    let unchanged = 0;
    for (let at = 0; at < pristine.length; at++) {
      // Every other byte, and one zero byte in 16 (most are free space): a sample is enough.
      if (pristine[at] === 0 ? at % 16 !== 0 : at % 2 !== 0) continue;
      const damaged = withByte(pristine, at, pristine[at]! ^ 0x21);
      let index: RangeIndex;
      try {
        index = load(damaged);
      } catch (error) {
        expect(error).toBeInstanceOf(Error);
        refusedCount++;
        continue;
      }
      const given = answersOf(index);
      if (given.some((answer, i) => answer !== answers[i])) throw new Error(`damage at byte ${at} was loaded and changed an answer`);
      unchanged++;
    }
    console.log(`${pristine.length} bytes: ${refusedCount} damaged copies refused, ${unchanged} loaded with every answer unchanged`);
    expect(refusedCount).toBeGreaterThan(100);
  });

  test("a file written before checksums were recorded is checked against its data version", () => {
    const old = join(dir, "old.db");
    copyFileSync(path, old);
    const db = new Database(old);
    db.run("DELETE FROM meta WHERE key = 'checksums'");
    db.close();
    expect(RangeIndex.open(old).info.records).toBeGreaterThan(0);
    const bytes = new Uint8Array(readFileSync(old));
    refused(withByte(bytes, offsetOf(bytes, "Cloudflare, Inc."), "X".charCodeAt(0)), /the data file is damaged: its tables do not match the hash in its data version \(20261101T000000Z-[0-9a-f]{8}\)/);
    const edited = new Database(old);
    edited.run("UPDATE meta SET value = 'yesterday' WHERE key = 'data_version'");
    edited.close();
    expect(() => RangeIndex.open(old)).toThrow(/its data version "yesterday" is not one iplookup writes/);
  });

  test("a missing or extra table is named", () => {
    const copy = join(dir, "tables.db");
    copyFileSync(path, copy);
    const db = new Database(copy);
    db.run("INSERT INTO blobs VALUES ('values:extra', x'00')");
    db.close();
    expect(() => RangeIndex.open(copy)).toThrow(/it has a table "values:extra" it was not built with/);
  });
});

test("the default data: a stored value changed is refused", () => {
  const bytes = new Uint8Array(readFileSync(defaultDataPath()));
  const at = Buffer.from(bytes).indexOf('"Cloudflare, Inc."');
  expect(at).toBeGreaterThan(0);
  refused(withByte(bytes, at + 1, "X".charCodeAt(0)), /the data file is damaged: its (values:as_name table does not match|tables do not match the hash in its data version)/);
});

/**
 * A copy of the file as someone who can write it would make it: line `from` of a
 * values:FIELD table replaced by `to`, and the checksums recomputed, so that every table
 * matches them. Gives the bytes and the line's number.
 */
function withValueLine(bytes: Uint8Array, field: string, from: string, to: string): { bytes: Uint8Array; line: number } {
  const db = Database.deserialize(bytes);
  try {
    const blobs = new Map(db.query<{ name: string; bytes: Uint8Array }, []>("SELECT name, bytes FROM blobs").all().map((row) => [row.name, row.bytes]));
    const lines = new TextDecoder().decode(blobs.get(`values:${field}`)).split("\n");
    const at = lines.indexOf(from);
    expect(at).toBeGreaterThanOrEqual(0);
    lines[at] = to;
    const table = new TextEncoder().encode(lines.join("\n"));
    blobs.set(`values:${field}`, table);
    db.run("UPDATE blobs SET bytes = ?1 WHERE name = ?2", [table, `values:${field}`]);
    db.run("UPDATE meta SET value = ?1 WHERE key = ?2", [checksumsOf(db, blobs), CHECKSUMS_KEY]);
    return { bytes: db.serialize(), line: at + 1 };
  } finally {
    db.close();
  }
}

describe("a hostile data file, its checksums recomputed, is refused", () => {
  test("a quote put into a name, which would make answers invalid JSON: every stored value must be JSON of its field's type", () => {
    const { bytes, line } = withValueLine(pristine, "as_name", '"Cloudflare, Inc."', '"Cloudf"lare, Inc."');
    refused(bytes, new RegExp(`^the data file is damaged: line ${line} of its values:as_name table is not a JSON string or null$`));
  });

  test("a name that is not a string, an AS number that is not one, a broken privacy object", () => {
    refused(withValueLine(pristine, "as_name", '"Google LLC"', "{}").bytes, /values:as_name table is not a JSON string or null/);
    refused(withValueLine(pristine, "as_name", '"Google LLC"', '"Google \\q"').bytes, /values:as_name table is not a JSON string or null/);
    refused(withValueLine(pristine, "country_code", '"AU"', '"A\u0000"').bytes, /values:country_code table is not a JSON string or null/);
    refused(withValueLine(pristine, "asn", "15169", "15169}").bytes, /values:asn table is not an AS number \(an integer 0–4294967295\) or null/);
    refused(withValueLine(pristine, "asn", "15169", '"15169"').bytes, /values:asn table is not an AS number/);
    const db = Database.deserialize(pristine);
    const privacy = new TextDecoder().decode(db.query<{ bytes: Uint8Array }, []>("SELECT bytes FROM blobs WHERE name = 'values:privacy'").get()!.bytes).split("\n")[0]!;
    db.close();
    refused(withValueLine(pristine, "privacy", privacy, privacy.slice(0, -1)).bytes, /values:privacy table is not a privacy object as iplookup writes it/);
  });

  test("a data version with a line break, which would fail every answer's X-Data-Version header", () => {
    const db = Database.deserialize(pristine);
    const blobs = new Map(db.query<{ name: string; bytes: Uint8Array }, []>("SELECT name, bytes FROM blobs").all().map((row) => [row.name, row.bytes]));
    db.run("UPDATE meta SET value = ?1 WHERE key = 'data_version'", ["20261101T000000Z-00000000\r\nSet-Cookie: a=b"]);
    db.run("UPDATE meta SET value = ?1 WHERE key = ?2", [checksumsOf(db, blobs), CHECKSUMS_KEY]);
    const bytes = db.serialize();
    db.close();
    refused(bytes, /^the data file is damaged: its data version "20261101T000000Z-00000000\\r\\nSet-Cookie: a=b" is not one iplookup writes$/);
  });

  test("the same file with its values as written loads", () => {
    const { bytes } = withValueLine(pristine, "as_name", '"Google LLC"', '"Google LLC"');
    expect(answersOf(load(bytes))).toEqual(answers);
  });

  test("a server reloading to it keeps the data it had; data info says it is damaged and exits 2", async () => {
    const live = join(dir, "live.db");
    copyFileSync(path, live);
    const outcomes: unknown[] = [];
    const index = new LiveIndex(live, (outcome) => outcomes.push(outcome.ok ? "ok" : (outcome.error as Error).message));
    const before = index.current();
    const { bytes, line } = withValueLine(pristine, "as_name", '"Cloudflare, Inc."', '"Cloudf"lare, Inc."');
    writeFileSync(`${live}.new`, bytes);
    renameSync(`${live}.new`, live);
    expect(await index.reload()).toBe(false);
    expect(outcomes).toEqual([`the data file is damaged: line ${line} of its values:as_name table is not a JSON string or null`]);
    expect(index.current()).toBe(before);
    expect(answersOf(index.current())).toEqual(answers);

    const info = cli(["data", "info", "--data", live]);
    expect(info.code).toBe(2);
    expect(info.stderr).toContain(`the data file is damaged: line ${line} of its values:as_name table is not a JSON string or null`);
    expect(info.stdout).toBe("");
  });
});

/** A copy of `bytes` with `from` (which the file must hold once: a piece of its schema's text) written over by `to`, of the same length. */
function withText(bytes: Uint8Array, from: string, to: string): Uint8Array {
  expect(to.length).toBe(from.length);
  const copy = bytes.slice();
  copy.set(new TextEncoder().encode(to), offsetOf(bytes, from));
  return copy;
}

describe("damage to the schema's text is told as damage, as any other", () => {
  test.each([
    ["a column of sources", "position INTEGER", "positiom INTEGER", /^the data file is damaged: its sources table cannot be read \(SQLite: no such column: position\)$/],
    ["a column of blobs", "bytes BLOB", "bytez BLOB", /^the data file is damaged: its blobs table cannot be read \(SQLite: no such column: bytes\)$/],
    ["blobs' name column", "(name TEXT PRIMARY KEY, bytes", "(namf TEXT PRIMARY KEY, bytes", /^the data file is damaged: its blobs table cannot be read \(SQLite: no such column: name\)$/],
    ["a column of meta", "value TEXT", "valud TEXT", /^the data file is damaged: its meta table cannot be read \(SQLite: no such column: value\)$/],
  ])("%s renamed", (_, from, to, reason) => {
    refused(withText(pristine, from, to), reason);
  });

  test("data info and lookup name the file and say it is damaged, and exit 2", () => {
    const file = join(dir, "pos.db");
    writeFileSync(file, withText(pristine, "position INTEGER", "positiom INTEGER"));
    const why = "the data file is damaged: its sources table cannot be read (SQLite: no such column: position)";
    expect(cli(["data", "info", "--data", file])).toMatchObject({ code: 2, stdout: "", stderr: `iplookup: --data: ${file}: ${why}\n` });
    expect(cli(["lookup", "1.0.0.1", "--data", file])).toMatchObject({ code: 2, stdout: "", stderr: `iplookup: --data: ${file}: ${why}\n` });
  });

  test("data update's read of the recipe says so too, naming the file", () => {
    const file = join(dir, "key.db");
    writeFileSync(file, withText(pristine, "key TEXT", "kez TEXT"));
    expect(() => readRecipe(file)).toThrow(`${file}: the data file is damaged: its meta table cannot be read (SQLite: no such column: key)`);
  });

  test("a SQLite file of another kind, with a meta table of its own, is still not an iplookup data file", () => {
    const file = join(dir, "other.db");
    const db = new Database(file);
    db.run("CREATE TABLE meta (name TEXT, text TEXT)");
    db.close();
    expect(() => RangeIndex.open(file)).toThrow(/^not an iplookup data file: no such column: key$/);
    expect(() => readRecipe(file)).toThrow(`${file} is not an iplookup data file: no such column: value`);
  });

  test("the format value changed on disk is damage; a file of another format is not", () => {
    refused(withText(pristine, "iplookup-data-2", "iplookup-data-3"), /^the data file is damaged: its meta table does not match the checksum recorded when it was built$/);
    refused(withText(pristine, "iplookup-data-2", "iplookup-dat`-2"), /^the data file is damaged: its meta table does not match/);
    // The format's key changed: the file has no format row.
    const key = Buffer.from(pristine).indexOf("formatiplookup-data-2");
    expect(key).toBeGreaterThan(0);
    refused(withByte(pristine, key, "F".charCodeAt(0)), /^the data file is damaged: its meta table does not match/);

    const db = Database.deserialize(pristine);
    const blobs = new Map(db.query<{ name: string; bytes: Uint8Array }, []>("SELECT name, bytes FROM blobs").all().map((row) => [row.name, row.bytes]));
    db.run("UPDATE meta SET value = 'iplookup-data-1' WHERE key = 'format'");
    db.run("UPDATE meta SET value = ?1 WHERE key = ?2", [checksumsOf(db, blobs), CHECKSUMS_KEY]);
    refused(db.serialize(), /^not an iplookup data file of format iplookup-data-2 \(found iplookup-data-1\)$/);
    db.run("DELETE FROM meta WHERE key = ?1", [CHECKSUMS_KEY]);
    refused(db.serialize(), /^not an iplookup data file of format iplookup-data-2 \(found iplookup-data-1\)$/);
    db.close();
  });

  test("a table read as text (its row's type changed), whose checksum over its UTF-8 still matches", () => {
    const db = Database.deserialize(pristine);
    db.run("UPDATE blobs SET bytes = CAST(bytes AS TEXT) WHERE name = 'v4_records'");
    expect(db.query<{ type: string }, []>("SELECT typeof(bytes) AS type FROM blobs WHERE name = 'v4_records'").get()!.type).toBe("text");
    const bytes = db.serialize();
    db.close();
    refused(bytes, /^the data file is damaged: its table "v4_records" is not stored as bytes$/);
  });

  test("a file without checksums whose sources column was renamed does not read it as \"undefined\"", () => {
    const db = Database.deserialize(withText(pristine, "name TEXT NOT NULL, origin", "namf TEXT NOT NULL, origin"));
    db.run("DELETE FROM meta WHERE key = ?1", [CHECKSUMS_KEY]);
    const bytes = db.serialize();
    db.close();
    refused(bytes, /^the data file is damaged: its sources table has no name column$/);
  });
});

/**
 * A copy of the file as someone who can write it would make it: the segment table
 * `name` (a u32 array) changed by `change`, and the checksums recomputed.
 */
function withSegments(bytes: Uint8Array, name: string, change: (table: Uint32Array) => void): Uint8Array {
  const db = Database.deserialize(bytes);
  try {
    const blobs = new Map(db.query<{ name: string; bytes: Uint8Array }, []>("SELECT name, bytes FROM blobs").all().map((row) => [row.name, row.bytes]));
    const table = new Uint32Array(blobs.get(name)!.slice().buffer);
    change(table);
    const changed = new Uint8Array(table.buffer);
    blobs.set(name, changed);
    db.run("UPDATE blobs SET bytes = ?1 WHERE name = ?2", [changed, name]);
    db.run("UPDATE meta SET value = ?1 WHERE key = ?2", [checksumsOf(db, blobs), CHECKSUMS_KEY]);
    return db.serialize();
  } finally {
    db.close();
  }
}

describe("segment tables that break the layout's invariants, their checksums recomputed, are refused", () => {
  /** The index of the IPv4 segment that starts at `dotted`. */
  const v4Segment = (dotted: string) => {
    const first = dotted.split(".").reduce((value, part) => value * 256n + BigInt(part), 0n);
    return [...load(pristine).segments(4)].findIndex(([start]) => start === first);
  };

  test("IPv4 starts out of order", () => {
    // 8.8.0.0 before 1.0.1.0: loaded, such a file answered 8.0.0.1 (in no range) as Cloudflare's, network 8.0.0.0/13.
    const at = v4Segment("8.8.0.0");
    expect(at).toBeGreaterThan(1);
    const swapped = withSegments(pristine, "v4_starts", (starts) => ([starts[at - 1], starts[at]] = [starts[at]!, starts[at - 1]!]));
    refused(swapped, new RegExp(`^the data file is damaged: its v4_starts table does not ascend at segment ${at}$`));
  });

  test("an IPv4 start repeated", () => {
    const at = v4Segment("8.8.0.0");
    refused(withSegments(pristine, "v4_starts", (starts) => (starts[at] = starts[at - 1]!)), new RegExp(`^the data file is damaged: its v4_starts table does not ascend at segment ${at}$`));
  });

  test("IPv6 starts out of order, repeated, or not starting at ::", () => {
    const count = load(pristine).info.segmentsV6;
    expect(count).toBeGreaterThan(2);
    const last = (count - 1) * 4;
    refused(
      withSegments(pristine, "v6_starts", (starts) => {
        const before = starts.slice(last - 4, last);
        starts.copyWithin(last - 4, last, last + 4);
        starts.set(before, last);
      }),
      new RegExp(`^the data file is damaged: its v6_starts table does not ascend at segment ${count - 1}$`),
    );
    refused(withSegments(pristine, "v6_starts", (starts) => starts.copyWithin(last, last - 4, last)), /its v6_starts table does not ascend/);
    // Only the last word of the first start: the one a check of the first word alone misses.
    refused(withSegments(pristine, "v6_starts", (starts) => (starts[3] = 1)), /^the data file is damaged: its v6_starts table does not start at address 0$/);
    refused(withSegments(pristine, "v4_starts", (starts) => (starts[0] = 1)), /^the data file is damaged: its v4_starts table does not start at address 0$/);
  });

  test("two neighbours with one record, which would make a result's network too small", () => {
    const at = v4Segment("8.8.0.0");
    refused(withSegments(pristine, "v4_records", (records) => (records[at] = records[at - 1]!)), new RegExp(`^the data file is damaged: its v4_records table gives segments ${at - 1} and ${at} the same record$`));
    refused(withSegments(pristine, "v6_records", (records) => (records[1] = records[0]!)), /^the data file is damaged: its v6_records table gives segments 0 and 1 the same record$/);
  });

  test("a record id past the records", () => {
    const records = load(pristine).info.records;
    refused(withSegments(pristine, "v6_records", (table) => (table[1] = records + 1)), new RegExp(`^the data file is damaged: its v6_records table gives segment 1 record ${records + 1}, past its ${records} records$`));
  });

  test("the tables as written, their checksums recomputed, load", () => {
    expect(answersOf(load(withSegments(pristine, "v4_starts", () => {})))).toEqual(answers);
    expect(answersOf(load(withSegments(pristine, "v6_starts", () => {})))).toEqual(answers);
  });
});
