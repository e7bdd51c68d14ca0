import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { blobNames, dataVersionOf, TablesHash } from "../../src/data-file/layout.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { writeDataFile } from "../../src/importer/data-file.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { LookupService } from "../../src/lookup/lookup-service.ts";
import { NO_SIGNAL_SOURCE } from "../support/privacy.ts";
import { writeSmallSources } from "../support/small-dataset.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-before-signals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * A data file as iplookup wrote it before signals: no privacy field, no signal column,
 * no checksums (so its tables are checked against its data version's hash).
 */
async function fileFromBeforeSignals(): Promise<string> {
  const path = join(dir, "old.db");
  writeDataFile(path, await buildDataSet(writeSmallSources(dir), new Date("2026-11-01T00:00:00Z")));
  const db = new Database(path);
  const fields = (JSON.parse(db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'fields'").get()!.value) as string[]).filter((field) => field !== "privacy");
  const values = new Uint32Array(new Uint8Array(db.query<{ bytes: Uint8Array }, []>("SELECT bytes FROM blobs WHERE name = 'record_values'").get()!.bytes).buffer);
  const width = fields.length + 1;
  const narrowed = new Uint32Array((values.length / width) * fields.length);
  for (let r = 0; r < values.length / width; r++) narrowed.set(values.subarray(r * width, r * width + fields.length), r * fields.length);
  db.run("DELETE FROM blobs WHERE name = 'values:privacy'");
  db.run("UPDATE blobs SET bytes = ?1 WHERE name = 'record_values'", [new Uint8Array(narrowed.buffer)]);
  db.run("UPDATE meta SET value = ?1 WHERE key = 'fields'", [JSON.stringify(fields)]);
  db.run("DELETE FROM meta WHERE key = 'checksums'");
  db.run("ALTER TABLE sources DROP COLUMN signal");
  const hash = new TablesHash();
  for (const name of blobNames(fields)) hash.add(name, db.query<{ bytes: Uint8Array }, [string]>("SELECT bytes FROM blobs WHERE name = ?1").get(name)!.bytes);
  db.run("UPDATE meta SET value = ?1 WHERE key = 'data_version'", [dataVersionOf("2026-11-01T00:00:00.000Z", hash.hex())]);
  db.close();
  return path;
}

test("a data file from before signals is read as having no source of any signal: privacy all null", async () => {
  const index = RangeIndex.open(await fileFromBeforeSignals());
  expect(index.info.fields).toEqual(["asn", "as_name", "country_code", "country", "privacy"]);
  expect(index.info.sources.map((source) => source.signal)).toEqual([null, null]);
  expect(index.hostingOfAsn(13335)).toBeNull();
  const service = new LookupService(() => index);
  const [found, missing] = service.resolve(["1.0.0.1", "9.9.9.9"]);
  expect(service.lookup([found!, missing!])).toEqual([
    { ip: "1.0.0.1", version: 4, found: true, network: "1.0.0.0/25", asn: 13335, as_name: "Cloudflare, Inc.", country_code: "AU", country: "Australia", privacy: NO_SIGNAL_SOURCE },
    { ip: "9.9.9.9", version: 4, found: false, network: null, asn: null, as_name: null, country_code: null, country: null, privacy: NO_SIGNAL_SOURCE },
  ]);
  // The bytes the API sends are the same as the objects.
  expect(JSON.parse(new TextDecoder().decode(service.lookupJson([found!, missing!], true).body))).toEqual({ results: service.lookup([found!, missing!]) });
  expect(index.lookup(parseAddress("1.0.0.130")!)?.record.privacy).toEqual(NO_SIGNAL_SOURCE);
});
