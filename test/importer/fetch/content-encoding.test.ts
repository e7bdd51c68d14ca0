import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { acquireFile, type AcquireContext } from "../../../src/importer/fetch/acquire.ts";
import { download } from "../../../src/importer/fetch/download.ts";
import { ExpansionBudget } from "../../../src/importer/fetch/expansion.ts";
import { DownloadAuth } from "../../../src/importer/fetch/locations.ts";
import { gzipBomb, ZEROS } from "../../support/bombs.ts";
import { gzip, iptoasnTsv } from "../../support/download-fixtures.ts";
import { startPublisher } from "../../support/publisher.ts";

/**
 * A body sent with `Content-Encoding: gzip` (asked for or not) is not inflated by the
 * HTTP client, where no bound would meter it: its bytes are kept as sent, a gzip file
 * that unpacking reads within CONTRACT §13's bounds. Other codings are refused.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-content-encoding-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});
const context = (): AcquireContext => ({ workDir: mkdtempSync(join(dir, "work-")), auth: DownloadAuth.none(), now: new Date(), budget: new ExpansionBudget() });

test("a gzip bomb sent as Content-Encoding: gzip is saved as sent, then stopped by the ratio when unpacked", async () => {
  const bomb = await gzipBomb(ZEROS, 256 * 2 ** 20);
  publisher.publish("/ce/ip2asn.tsv", { body: bomb, encoding: "gzip" });
  const saved = await download({ url: `${publisher.url}/ce/ip2asn.tsv` }, join(dir, "saved"));
  if (saved.kind !== "downloaded") throw new Error(saved.kind);
  expect(saved.size).toBe(bomb.byteLength);
  await expect(acquireFile({ location: `${publisher.url}/ce/ip2asn.tsv` }, context())).rejects.toThrow(/expands to more than 100 times .* \(a decompression bomb\?\): stopped/);
});

test("a real file sent as Content-Encoding: gzip is unpacked and read as usual", async () => {
  publisher.publish("/ce/ok.tsv", { body: gzip(iptoasnTsv(13335)), encoding: "gzip" });
  const got = await acquireFile({ location: `${publisher.url}/ce/ok.tsv` }, context());
  const [file] = got?.acquired.files ?? [];
  expect(readFileSync(file?.path as string, "utf8")).toBe(iptoasnTsv(13335));
});

test("another coding (br, deflate) is refused, naming it", async () => {
  for (const [i, encoding] of ["br", "deflate", "gzip, br"].entries()) {
    publisher.publish(`/ce/coded-${i}.tsv`, { body: "whatever", encoding });
    await expect(download({ url: `${publisher.url}/ce/coded-${i}.tsv` }, join(dir, `refused-${i}`))).rejects.toThrow(`it was sent with Content-Encoding ${encoding}, which iplookup did not ask for and does not take`);
  }
});
