import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzip, iptoasnTsv, sha256 } from "../support/download-fixtures.ts";
import { cliAsync as cli, startPublisher } from "../support/publisher.ts";

/**
 * CONTRACT §13, checksums never skipped silently, through `data import` and `data
 * update` against a loopback publisher (the cases one by one: test/importer/fetch/
 * checksum-probes.test.ts).
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-checksum-e2e-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});
const WRONG = "0".repeat(64);

describe("a download with a query (an object's generation, a version)", () => {
  test("its checksum at the path's .sha256 before the query is found and must match, on import and on update", async () => {
    const body = gzip(iptoasnTsv(13335));
    const source = "/signed/ip2asn.tsv.gz";
    const url = `${publisher.url}${source}?generation=1763600000`;
    // The bucket hides what it lacks: 403 at URL.sha256 (as text); the checksum is at the path's.
    publisher.publish(`${source}?generation=1763600000`, { body });
    publisher.publish(`${source}?generation=1763600000.sha256`, { body: "", status: 403 });
    publisher.publish(`${source}.sha256?generation=1763600000`, { body: `${sha256(body)}  ip2asn.tsv.gz\n` });
    const path = join(dir, "signed.db");
    const imported = await cli(["data", "import", "--data", path, url]);
    expect(imported.code).toBe(0);
    expect(imported.stderr).toContain(`checksum verified: SHA-256 ${sha256(body)} (from ${publisher.url}${source}.sha256?generation=1763600000)`);

    const changed = gzip(iptoasnTsv(64500));
    publisher.publish(`${source}?generation=1763600000`, { body: changed });
    const before = readFileSync(path);
    const refused = await cli(["data", "update", "--data", path]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`its SHA-256 is ${sha256(changed)}, but ${publisher.url}${source}.sha256?generation=1763600000 says ${sha256(body)}: refused`);
    expect(readFileSync(path).equals(before)).toBe(true);

    // A probe that fails otherwise (500) refuses the update too.
    publisher.publish(`${source}.sha256?generation=1763600000`, { body: "", status: 500 });
    const failed = await cli(["data", "update", "--data", path]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(`its checksum could not be looked for at ${publisher.url}${source}.sha256?generation=1763600000: HTTP 500 Internal Server Error; refused`);

    publisher.publish(`${source}.sha256?generation=1763600000`, { body: `${sha256(changed)}  ip2asn.tsv.gz\n` });
    const updated = await cli(["data", "update", "--data", path]);
    expect(updated.code).toBe(0);
    expect(updated.stderr).toContain(`checksum verified: SHA-256 ${sha256(changed)}`);
  });

  test("a wrong checksum at the path's place is refused even where the server answers URL.sha256 with the download itself", async () => {
    const body = gzip(iptoasnTsv(13335));
    publisher.publish("/token/ip2asn.tsv.gz", { body });
    publisher.publish("/token/ip2asn.tsv.gz.sha256", { body: `${WRONG}  ip2asn.tsv.gz\n` });
    const result = await cli(["data", "import", "--data", join(dir, "token.db"), `${publisher.url}/token/ip2asn.tsv.gz?v=2`]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`but ${publisher.url}/token/ip2asn.tsv.gz.sha256?v=2 says ${WRONG}: refused`);
  });
});

describe("no checksum published", () => {
  test("404 at every place: said, and the import goes on; --require-checksum refuses it", async () => {
    publisher.publish("/plain/ip2asn.tsv.gz", { body: gzip(iptoasnTsv(13335)) });
    const path = join(dir, "plain.db");
    const imported = await cli(["data", "import", "--data", path, `${publisher.url}/plain/ip2asn.tsv.gz`]);
    expect(imported.code).toBe(0);
    expect(imported.stderr).toContain(`no checksum published (nothing at ${publisher.url}/plain/ip2asn.tsv.gz.sha256): not verified`);
    const required = await cli(["data", "import", "--data", join(dir, "required.db"), "--require-checksum", `${publisher.url}/plain/ip2asn.tsv.gz`]);
    expect(required.code).toBe(1);
    expect(required.stderr).toContain("and --require-checksum is given: refused");
    publisher.publish("/plain/ip2asn.tsv.gz", { body: gzip(iptoasnTsv(64500)) });
    const update = await cli(["data", "update", "--data", path, "--require-checksum"]);
    expect(update.code).toBe(1);
    expect(update.stderr).toContain("and --require-checksum is given: refused");
  });
});

describe("a probe answered 200 with something that is not a checksum", () => {
  test("an HTML page at URL.sha256 refuses the import and the update (the file left as it was); 404 again lets it through", async () => {
    publisher.publish("/paged/ip2asn.tsv.gz", { body: gzip(iptoasnTsv(13335)) });
    publisher.publish("/paged/ip2asn.tsv.gz.sha256", { body: "<!doctype html><title>Sign in</title>\n" });
    const path = join(dir, "paged.db");
    const refusedImport = await cli(["data", "import", "--data", path, `${publisher.url}/paged/ip2asn.tsv.gz`]);
    expect(refusedImport.code).toBe(1);
    expect(refusedImport.stderr).toContain(`its checksum could not be read: ${publisher.url}/paged/ip2asn.tsv.gz.sha256 answered HTTP 200 with`);
    expect(refusedImport.stderr).not.toContain("no checksum published");

    publisher.publish("/paged/ip2asn.tsv.gz.sha256", { body: "", status: 404 });
    expect((await cli(["data", "import", "--data", path, `${publisher.url}/paged/ip2asn.tsv.gz`])).code).toBe(0);
    const before = readFileSync(path);
    publisher.publish("/paged/ip2asn.tsv.gz", { body: gzip(iptoasnTsv(64500)) });
    publisher.publish("/paged/ip2asn.tsv.gz.sha256", { body: "<!doctype html><title>Sign in</title>\n" });
    const refusedUpdate = await cli(["data", "update", "--data", path]);
    expect(refusedUpdate.code).toBe(1);
    expect(refusedUpdate.stderr).toContain(`data update failed: source 1 (${publisher.url}/paged/ip2asn.tsv.gz): its checksum could not be read: ${publisher.url}/paged/ip2asn.tsv.gz.sha256 answered HTTP 200 with 38 bytes ("<!doctype html><title>Sign in</title>"), which holds no SHA-256 line; only 404 or 403 means none is published; refused; ${path} is left as it was`);
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});
