import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { installWritten, writeBeside, writeDataFile } from "../../src/importer/data-file.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { writeSmallSources } from "../support/small-dataset.ts";
import { NO_SIGNAL_SOURCE } from "../support/privacy.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-import-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function build(name: string, files?: Record<string, string>) {
  const sub = join(dir, name);
  rmSync(sub, { recursive: true, force: true });
  mkdirSync(sub);
  const sources = writeSmallSources(sub, files);
  const path = join(sub, "data.db");
  writeDataFile(path, await buildDataSet(sources, new Date("2026-11-01T00:00:00Z")));
  return { path, sub, sources };
}

describe("a data file round trip", () => {
  test("lookups, networks and info", async () => {
    const { path } = await build("round-trip");
    const index = RangeIndex.open(path);
    const hit = (text: string) => {
      const found = index.lookup(parseAddress(text)!);
      return found && { network: found.network, record: found.record };
    };
    expect(hit("1.0.0.1")).toEqual({ network: "1.0.0.0/25", record: { asn: 13335, as_name: "Cloudflare, Inc.", country_code: "AU", country: "Australia", privacy: NO_SIGNAL_SOURCE } });
    expect(hit("1.0.0.130")).toEqual({ network: "1.0.0.128/28", record: { asn: 64500, as_name: 'Example "Nested" Net', country_code: "AU", country: "Australia", privacy: NO_SIGNAL_SOURCE } });
    expect(hit("1.0.0.144")?.network).toBe("1.0.0.144/28");
    expect(hit("1.0.0.200")?.network).toBe("1.0.0.192/26");
    expect(hit("8.8.8.8")).toEqual({ network: "8.8.8.0/24", record: { asn: 15169, as_name: "Google LLC", country_code: "US", country: "United States", privacy: NO_SIGNAL_SOURCE } });
    // Country only: the rest of 8.8.0.0/19.
    expect(hit("8.8.0.1")).toEqual({ network: "8.8.0.0/21", record: { asn: null, as_name: null, country_code: "US", country: "United States", privacy: NO_SIGNAL_SOURCE } });
    expect(hit("8.8.31.255")?.network).toBe("8.8.16.0/20");
    expect(hit("9.9.9.9")).toBeNull();
    expect(hit("2606:4700:4700::1111")).toEqual({ network: "2606:4700:4700::1111/128", record: { asn: 13335, as_name: "Cloudflare, Inc.", country_code: "US", country: "United States", privacy: NO_SIGNAL_SOURCE } });
    expect(hit("2606:4700:4700::1112")?.network).toBe("2606:4700:4700::1112/127");
    expect(hit("2606:4700:4700::1100")?.network).toBe("2606:4700:4700::1100/124");
    expect(hit("2606:4700:4700::11ff")?.network).toBe("2606:4700:4700::1180/121");
    expect(hit("2606:4700:4700::1200")).toBeNull();
    expect(index.info).toMatchObject({
      builtAt: "2026-11-01T00:00:00.000Z",
      version: "test-asn@1.0.0 test-country@1.0.0",
      sources: [
        { name: "asn", license: "CC BY 4.0", rowsV4: 3, rangesV4: 4, rowsV6: 1, rangesV6: 1, signal: null },
        { name: "country", license: "CC0", rowsV4: 2, rangesV4: 2, rowsV6: 1, rangesV6: 1, signal: null },
      ],
    });
  });

  test("the data file can be loaded from bytes", async () => {
    const { path } = await build("bytes");
    const { Database } = await import("bun:sqlite");
    const index = RangeIndex.fromDatabase(Database.deserialize(readFileSync(path)));
    expect(index.lookup(parseAddress("1.0.0.1")!)?.record.asn).toBe(13335);
  });
});

describe("bad input leaves the installed file alone", () => {
  test.each([
    ["asn-4.csv", "16777216,16777471,13335,\"Cloudflare", /asn-4\.csv:1: unterminated/],
    ["asn-4.csv", "16777216,16777471,notanumber,Org", /asn-4\.csv:1: the AS number "notanumber" is not an integer/],
    ["country-4.csv", "1,2,AU\n5,4,US", /country-4\.csv:2: the range ends before it starts/],
    ["country-4.csv", "1,4294967296,AU", /past the last IPv4 address/],
    ["country-6.csv", "0x10,20,AU", /country-6\.csv:1: .*0x10/],
  ])("%s: %p", async (file, text, message) => {
    const { path, sub, sources } = await build(`bad-${file}-${text.length}`);
    const before = readFileSync(path);
    writeFileSync(join(sub, file), text);
    await expect(buildDataSet(sources, new Date())).rejects.toThrow(message);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  test("a failed write removes its temporary file and keeps the old one", async () => {
    const { path, sub, sources } = await build("atomic");
    const before = readFileSync(path);
    const contents = await buildDataSet(sources, new Date());
    const broken = { ...contents, records: [{ asn: 1n, as_name: null, country_code: null, country: null }] as never }; // a BigInt cannot be written as JSON
    expect(() => writeDataFile(path, broken)).toThrow();
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(readdirSync(sub).filter((name) => name.includes(".tmp"))).toEqual([]);
    expect(existsSync(path)).toBe(true);
  });

  test("a written file that fails its check is removed, and the old one kept", async () => {
    const { path, sub, sources } = await build("checked");
    const before = readFileSync(path);
    const contents = await buildDataSet(sources, new Date());
    let checked = "";
    expect(() =>
      writeDataFile(path, contents, (written) => {
        checked = written;
        throw new Error("the written file does not load");
      }),
    ).toThrow("the written file does not load");
    expect(checked).toMatch(/\.tmp$/);
    expect(existsSync(checked)).toBe(false);
    expect(readFileSync(path).equals(before)).toBe(true);
    expect(readdirSync(sub).filter((name) => name.includes(".tmp"))).toEqual([]);
  });
});

test("a rename that fails names the data file, not the file written under its temporary name, which is removed", async () => {
  const { sub, sources } = await build("rename");
  // A folder that took the data file's name after the import looked (data import refuses one before it begins).
  const path = join(sub, "became-a-folder.db");
  mkdirSync(path);
  const { temporary } = writeBeside(path, await buildDataSet(sources, new Date()));
  expect(() => installWritten(temporary, path)).toThrow(`cannot install the data file ${path}: it is a directory (EISDIR)`);
  expect(existsSync(temporary)).toBe(false);
});

describe("the installed file's permissions", () => {
  test("it keeps the mode of the file it replaces, whatever the written one had; a new file keeps its own", async () => {
    const { path, sub, sources } = await build("mode");
    const contents = await buildDataSet(sources, new Date());
    for (const mode of [0o644, 0o640, 0o604]) {
      chmodSync(path, mode);
      // As written under umask 077.
      const { temporary } = writeBeside(path, contents);
      chmodSync(temporary, 0o600);
      installWritten(temporary, path);
      expect((statSync(path).mode & 0o7777).toString(8)).toBe(mode.toString(8));
    }
    const fresh = join(sub, "fresh.db");
    const { temporary } = writeBeside(fresh, contents);
    chmodSync(temporary, 0o600);
    installWritten(temporary, fresh);
    expect((statSync(fresh).mode & 0o7777).toString(8)).toBe("600");
  });
});
