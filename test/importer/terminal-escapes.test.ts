import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { uint32, writeMmdb } from "../support/mmdb-writer.ts";
import { cli } from "../support/server-process.ts";

/**
 * Text from a downloaded file reaches the operator's terminal: an MMDB's metadata, an
 * archive's file names, an AS name. Its control characters (C0, DEL, C1) and
 * bidirectional controls are written out there; --json keeps what is stored exactly.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-terminal-escapes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Any character a terminal acts on, or that reorders a line. */
const RAW = /[\p{Cc}\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const visible = (text: string) => text.replace(/\n/g, "");

function asnMmdb(databaseType: string, description?: string): Uint8Array {
  return writeMmdb({
    ipVersion: 6,
    databaseType,
    ...(description !== undefined ? { description: { en: description } } : {}),
    buildEpoch: Date.UTC(2026, 10, 20) / 1000,
    networks: [{ network: "1.0.0.0/24", value: { autonomous_system_number: uint32(13335), autonomous_system_organization: "CLOUDFLARENET" } }],
  }).bytes;
}

test("an MMDB's database_type and description: written out in the import's lines, in data info and its --json; GeoLite2's licence still recognised", () => {
  const file = join(dir, "evil.mmdb");
  writeFileSync(file, asnMmdb("GeoLite2-ASN\u001b[31mEVIL\u001b[0m", "ASN\u009b2J\u202eevil\u0007"));
  const path = join(dir, "mmdb.db");
  const imported = cli(["data", "import", "--data", path, file]);
  expect(imported.code).toBe(0);
  expect(visible(imported.stdout + imported.stderr)).not.toMatch(RAW);
  const name = "GeoLite2-ASN\\u001b[31mEVIL\\u001b[0m (ASN\\u009b2J\\u202eevil\\u0007)";
  expect(imported.stdout + imported.stderr).toContain(name);
  const info = cli(["data", "info", "--data", path]);
  expect(info.code).toBe(0);
  expect(visible(info.stdout)).not.toMatch(RAW);
  expect(info.stdout).toContain(`1. ${name}`);
  expect(info.stdout).toContain("GeoLite2 End User License Agreement");
  const json = JSON.parse(cli(["data", "info", "--json", "--data", path]).stdout);
  expect(json.sources[0].name).toBe(name);
  expect(json.sources[0].license).toBe("GeoLite2 End User License Agreement");
});

test("an archive's member names: written out in 'unpacked', 'read', and data info's 'from inside'", async () => {
  const member = "GeoLite2-ASN_\u001b]0;pwned\u0007\u202e/GeoLite2-ASN\u009b2J.mmdb";
  const archive = join(dir, "evil.tar.gz");
  writeFileSync(archive, await new Bun.Archive({ [member]: asnMmdb("GeoLite2-ASN") }, { compress: "gzip" }).bytes());
  const path = join(dir, "archive.db");
  const imported = cli(["data", "import", "--data", path, archive]);
  expect(imported.code).toBe(0);
  const shown = "GeoLite2-ASN_\\u001b]0;pwned\\u0007\\u202e/GeoLite2-ASN\\u009b2J.mmdb";
  expect(visible(imported.stdout + imported.stderr)).not.toMatch(RAW);
  expect(imported.stdout + imported.stderr).toContain(`(tar.gz): ${shown}`);
  const info = cli(["data", "info", "--data", path]);
  expect(info.code).toBe(0);
  expect(visible(info.stdout)).not.toMatch(RAW);
  expect(info.stdout).toContain(`from inside:   ${shown}`);
});

test("AS names: written out in 'asn' and 'asn --search', and 'lookup' (the same JSON); --json exact", () => {
  const evil = "EVIL\u001b[2J\u0007\u0000\u202eNET\u009b\u007f";
  const file = join(dir, "asn.mmdb");
  writeFileSync(
    file,
    writeMmdb({
      ipVersion: 6,
      databaseType: "GeoLite2-ASN",
      networks: [{ network: "1.0.0.0/24", value: { autonomous_system_number: uint32(100), autonomous_system_organization: evil } }],
    }).bytes,
  );
  const path = join(dir, "asn.db");
  expect(cli(["data", "import", "--data", path, file]).code).toBe(0);
  const shown = "EVIL\\u001b[2J\\u0007\\u0000\\u202eNET\\u009b\\u007f";
  for (const args of [["asn", "100"], ["asn", "--search", "EVIL"]]) {
    const human = cli([...args, "--data", path]);
    expect(human.code).toBe(0);
    expect(visible(human.stdout)).not.toMatch(RAW);
    expect(human.stdout).toContain(shown);
    const json = cli([...args, "--json", "--data", path]);
    expect(json.code).toBe(0);
    expect(json.stdout).toContain(evil.replace(/[\u0000-\u001f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`));
  }
  const looked = cli(["lookup", "1.0.0.1", "--data", path]);
  expect(looked.code).toBe(0);
  expect(visible(looked.stdout)).not.toMatch(RAW);
  expect(JSON.parse(looked.stdout).as_name).toBe(evil);
  expect(JSON.parse(cli(["lookup", "1.0.0.1", "--json", "--data", path]).stdout).as_name).toBe(evil);
});
