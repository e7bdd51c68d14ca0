import { afterAll, expect, test } from "bun:test";
import { lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { takeUpdateLock, updateLockPath } from "../../src/importer/update-lock.ts";
import { uint32, writeMmdb } from "../support/mmdb-writer.ts";
import { cli } from "../support/server-process.ts";

/** --data through a symbolic link: one file, one lock, and the link stays a link. */
const dir = mkdtempSync(join(tmpdir(), "iplookup-data-symlink-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("an import or update through a link takes the file's own lock and installs over the file, not the link", () => {
  const source = join(dir, "asn.mmdb");
  writeFileSync(source, writeMmdb({ ipVersion: 6, databaseType: "GeoLite2-ASN", networks: [{ network: "1.0.0.0/24", value: { autonomous_system_number: uint32(100), autonomous_system_organization: "A" } }] }).bytes);
  mkdirSync(join(dir, "real"));
  const real = join(dir, "real", "k.db");
  expect(cli(["data", "import", "--data", real, source]).code).toBe(0);
  const link = join(dir, "link.db");
  symlinkSync(real, link);
  expect(updateLockPath(link)).toBe(updateLockPath(real));

  // An update of the file by its own name holds it: one through the link waits its turn.
  const lock = takeUpdateLock(real);
  try {
    const busy = cli(["data", "update", "--data", link]);
    expect(busy.code).not.toBe(0);
    expect(busy.stderr).toContain("already running");
  } finally {
    lock.release();
  }

  const imported = cli(["data", "import", "--data", link, source]);
  expect(imported.code).toBe(0);
  expect(lstatSync(link).isSymbolicLink()).toBe(true);
  expect(readlinkSync(link)).toBe(real);
  expect(lstatSync(real).isFile()).toBe(true);
});
