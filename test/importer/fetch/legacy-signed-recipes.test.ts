import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checksumsOf } from "../../../src/data-file/checksums.ts";
import { iptoasnTsv } from "../../support/download-fixtures.ts";
import { runCliInProcess } from "../../support/in-process-cli.ts";
import { startPublisher } from "../../support/publisher.ts";

/**
 * A data file imported before signed URLs' parameters were counted as secret (19d0acb)
 * recorded them in plain in its recipe. data update uses the URL as recorded, and
 * records it again as it was: it never leaves a recipe that the next update refuses
 * (it did: the first update took the sig out, and every later one lacked it).
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-legacy-signed-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const SAS = "sv=2024-11-04&se=2030-01-01&sr=b&sp=r&sig=LONGLIVEDSAS";
const S3 = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=604800&X-Amz-Signature=PLAINAMZSIG";

/** The data file's recipe as an import before 19d0acb wrote it: each URL whole, nothing taken out. */
function asBefore19d0acb(path: string, urls: readonly string[]): void {
  const db = new Database(path);
  const recipe = JSON.parse(db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'recipe'").get()!.value);
  recipe.sources.forEach((source: { files: Array<Record<string, unknown> & { fetched: Record<string, unknown> }> }, i: number) => {
    const file = source.files[0]!;
    file.location = urls[i];
    file.fetched.url = urls[i];
    delete file.secretParams;
    delete file.credentials;
  });
  db.run("UPDATE meta SET value = ?1 WHERE key = 'recipe'", [JSON.stringify(recipe)]);
  const blobs = new Map(db.query<{ name: string; bytes: Uint8Array }, []>("SELECT name, bytes FROM blobs").all().map((row) => [row.name, row.bytes]));
  db.run("UPDATE meta SET value = ?1 WHERE key = 'checksums'", [checksumsOf(db, blobs)]);
  db.close();
}

function filesOf(path: string): Array<Record<string, unknown>> {
  const db = new Database(path, { readonly: true });
  const recipe = JSON.parse(db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'recipe'").get()!.value);
  db.close();
  return recipe.sources.map((source: { files: unknown[] }) => source.files[0]);
}

test("a recipe holding a SAS sig and an S3 signature in plain updates again and again, each URL recorded as it was", async () => {
  const urls = [`${publisher.url}/legacy/sas.tsv?${SAS}`, `${publisher.url}/legacy/s3.tsv?${S3}`];
  // Only the URLs with their signatures answer: the paths alone are 404.
  publisher.publish(`/legacy/sas.tsv?${SAS}`, { body: `${iptoasnTsv(13335)}\n` });
  publisher.publish(`/legacy/s3.tsv?${S3}`, { body: `${iptoasnTsv(15169)}\n` });
  const path = join(dir, "data.db");
  const run = (...args: string[]) => runCliInProcess(join(dir, "no-default.db"), args);
  const imported = await run("data", "import", "--data", path, urls[0]!, urls[1]!);
  expect(imported.code).toBe(0);
  asBefore19d0acb(path, urls);

  for (const asn of [64500, 64501, 64502]) {
    publisher.publish(`/legacy/sas.tsv?${SAS}`, { body: `${iptoasnTsv(asn)}\n`, modified: new Date(Date.now() + asn * 1000) });
    const updated = await run("data", "update", "--data", path);
    const said = updated.stdout + updated.stderr;
    expect({ asn, code: updated.code }).toEqual({ asn, code: 0 });
    // The same URL, not a new one: the sig in the recorded URL is no change.
    expect(said).toMatch(/changed: source 1 \(.*\): SHA-256 /);
    expect(said).not.toContain("LONGLIVEDSAS");
    expect(said).not.toContain("PLAINAMZSIG");
    const files = filesOf(path);
    expect(files.map((file) => file.location)).toEqual(urls);
    expect(files.map((file) => [file.secretParams, file.credentials])).toEqual([
      [undefined, undefined],
      [undefined, undefined],
    ]);
  }
  const info = await run("data", "info", "--data", path);
  expect(info.stdout).not.toContain("LONGLIVEDSAS");
  expect(info.stdout).not.toContain("PLAINAMZSIG");
  expect(info.stdout).not.toContain("with credentials");
});
