import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildDataSet } from "../../../src/importer/build.ts";
import { writeDataFile } from "../../../src/importer/data-file.ts";
import { fileWrites } from "../../../src/importer/fetch/disk-writes.ts";
import { unpack, UnpackError } from "../../../src/importer/fetch/unpack.ts";
import { gzip, iptoasnTsv, sha256, zip } from "../../support/download-fixtures.ts";
import { startPublisher } from "../../support/publisher.ts";
import { writeSmallSources } from "../../support/small-dataset.ts";
import { runCliInProcess } from "../../support/in-process-cli.ts";

/**
 * A disk that fills up during an import or update (CONTRACT §11: any failure leaves the
 * installed file unchanged and exits 1 with the source and the reason). On such a disk a
 * write writes what fits and answers its count, and only the write after fails (ENOSPC):
 * here the writes of downloads and unpacked files are made to do so after `limit` bytes.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-disk-writes-"));
const publisher = startPublisher();
const real = { ...fileWrites };
afterEach(() => Object.assign(fileWrites, real));
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Writes take `limit` bytes in all; the write that reaches it is cut short, those after fail with ENOSPC. */
function diskFullAfter(limit: number): void {
  let total = 0;
  const take = (length: number) => {
    if (total >= limit) throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
    const fits = Math.min(length, limit - total);
    total += fits;
    return fits;
  };
  fileWrites.write = async (file, bytes) => real.write(file, bytes.subarray(0, take(bytes.byteLength)));
  fileWrites.writeSync = (fd, bytes) => real.writeSync(fd, bytes.subarray(0, take(bytes.byteLength)));
}

/** Runs a command line in this process; resolves to its exit code and what it printed. */
function run(...args: string[]) {
  return runCliInProcess(join(dir, "no-default.db"), args);
}

let files = 0;
/** An installed data file (the small data set), to be left as it is. */
async function installed(): Promise<{ path: string; bytes: Buffer<ArrayBuffer> }> {
  const folder = join(dir, `installed-${++files}`);
  mkdirSync(folder);
  const path = join(folder, "data.db");
  writeDataFile(path, await buildDataSet(writeSmallSources(mkdtempSync(join(dir, "sources-"))), new Date("2026-11-01T00:00:00Z")));
  return { path, bytes: readFileSync(path) };
}

// Cut short by the length of its last row, a download is still a whole file of rows: read, it would give a data set without that row.
const TSV = `${iptoasnTsv(13335)}\n`;
const LAST_ROW = `${TSV.trimEnd().split("\n").at(-1)}\n`;

describe("a write the disk cuts short fails the import, naming the source; the installed file stays as it was", () => {
  test("data import: the download's last write falls short, though its checksum matches what was sent", async () => {
    const { path, bytes } = await installed();
    publisher.publish("/a/ip2asn.tsv", { body: TSV });
    const url = `${publisher.url}/a/ip2asn.tsv`;
    diskFullAfter(TSV.length - LAST_ROW.length);
    const result = await run("data", "import", "--data", path, "--sha256", sha256(new TextEncoder().encode(TSV)), url);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(new RegExp(`iplookup: source 1 \\(${url.replaceAll(".", "\\.")}\\): cannot write \\S+/ip2asn\\.tsv: disk full / short write \\(\\d+ of \\d+ bytes written\\)\\n$`));
    expect(result.stderr).not.toContain("checksum verified");
    expect(readFileSync(path)).toEqual(bytes);
    expect(readdirSync(join(dir, `installed-${files}`))).toEqual(["data.db"]);
  });

  test("data update: the unpacked file's last write falls short; a write after a full disk fails with ENOSPC, named", async () => {
    const { path } = await installed();
    const url = `${publisher.url}/b/ip2asn.tsv.gz`;
    publisher.publish("/b/ip2asn.tsv.gz", { body: gzip(TSV) });
    expect((await run("data", "import", "--data", path, url)).code).toBe(0);
    const bytes = readFileSync(path);

    const changed = TSV.replace("\t13335\t", "\t64500\t");
    const body = gzip(changed);
    publisher.publish("/b/ip2asn.tsv.gz", { body });
    // The download is written whole, then the file unpacked from it falls short.
    diskFullAfter(body.byteLength + changed.length - LAST_ROW.length);
    const cut = await run("data", "update", "--data", path);
    expect(cut.code).toBe(1);
    expect(cut.stderr).toMatch(/iplookup: data update failed: source 1 \(http:\/\/127\.0\.0\.1:\d+\/b\/ip2asn\.tsv\.gz\): cannot write \S+\/ip2asn\.tsv: disk full \/ short write \(\d+ of \d+ bytes written\); \S+data\.db is left as it was\n$/);
    expect(readFileSync(path)).toEqual(bytes);

    diskFullAfter(0);
    const full = await run("data", "update", "--data", path);
    expect(full.code).toBe(1);
    expect(full.stderr).toMatch(
      /iplookup: data update failed: source 1 \(http:\/\/127\.0\.0\.1:\d+\/b\/ip2asn\.tsv\.gz\): cannot write \S+\/ip2asn\.tsv\.gz: disk full \(ENOSPC: no space left on device, write\); \S+data\.db is left as it was\n$/,
    );
    expect(readFileSync(path)).toEqual(bytes);
  });

  test("unpacking a zip: a write cut short fails, and what was written of the file is removed", async () => {
    const folder = mkdtempSync(join(dir, "zip-"));
    const archive = join(folder, "data.zip");
    writeFileSync(archive, zip({ "ip2asn.tsv": TSV, "README.txt": "about" }));
    diskFullAfter(TSV.length - LAST_ROW.length);
    const unpacking = unpack(archive, "data.zip", join(folder, "unpacked"));
    await expect(unpacking).rejects.toThrow(UnpackError);
    await expect(unpacking).rejects.toThrow(/^cannot write \S+\/ip2asn\.tsv: disk full \/ short write \(\d+ of \d+ bytes written\)$/);
    expect(existsSync(join(folder, "unpacked", "1", "ip2asn.tsv"))).toBe(false);
  });

  test("writing the data file: SQLite's failure names the file", async () => {
    const { path, bytes } = await installed();
    const contents = await buildDataSet(writeSmallSources(mkdtempSync(join(dir, "sources-"))), new Date("2026-11-01T00:00:00Z"));
    const failing = Object.defineProperty({ ...contents }, "sources", {
      get() {
        throw new Error("database or disk is full");
      },
    });
    expect(() => writeDataFile(path, failing)).toThrow(/^cannot write the data file \S+\/data\.db\.\d+\.tmp: database or disk is full$/);
    expect(readFileSync(path)).toEqual(bytes);
  });
});
