import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hasCredentials, redactSecrets, storedUrl } from "../../../src/importer/fetch/locations.ts";
import { iptoasnTsv, sha256 } from "../../support/download-fixtures.ts";
import { runCliInProcess } from "../../support/in-process-cli.ts";
import { startPublisher } from "../../support/publisher.ts";

/**
 * A signed URL's signature and credential (S3's X-Amz-…, Google's X-Goog-…, Azure's SAS
 * sig, CloudFront's Signature) are credentials (CONTRACT §11): never printed, stored in
 * the data file or shown in data info, as a token is not. Unlike a token (or a SAS's
 * sig: sas-signature.test.ts), data update cannot put S3's and Google's back (they
 * expire), and says so.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-signed-urls-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const SIGNED = [
  ["X-Amz-Signature", "AMZSIGNATURE"],
  ["X-Amz-Credential", "AKIAEXAMPLE%2F20261120%2Fus-east-1%2Fs3%2Faws4_request"],
  ["X-Amz-Security-Token", "AMZSESSIONTOKEN"],
  ["X-Goog-Signature", "GOOGSIGNATURE"],
  ["X-Goog-Credential", "GOOGCREDENTIAL"],
  ["sig", "AZURESAS%3D"],
  ["Signature", "CLOUDFRONTSIG"],
  ["AWSAccessKeyId", "AKIAOLDFORM"],
] as const;
const SECRETS = SIGNED.map(([, value]) => decodeURIComponent(value).split("/")[0] as string);

test("hidden in messages and in the stored URL, counted as credentials; the parameters that are not secret kept", () => {
  for (const [name, value] of SIGNED) {
    const url = `https://bucket.example/ip2asn.tsv.gz?X-Amz-Algorithm=AWS4-HMAC-SHA256&${name}=${value}&X-Amz-Expires=3600`;
    expect(redactSecrets(`${url}: HTTP 403`)).toBe(`https://bucket.example/ip2asn.tsv.gz?X-Amz-Algorithm=AWS4-HMAC-SHA256&${name}=***&X-Amz-Expires=3600: HTTP 403`);
    expect(storedUrl(url)).toBe("https://bucket.example/ip2asn.tsv.gz?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600");
    expect(hasCredentials(new URL(url))).toBe(true);
  }
  expect(redactSecrets("https://a.example/c/f.csv?sv=2024-11-04&se=2027-01-01&sr=b&sp=r&sig=AbC%2B%3D")).toBe("https://a.example/c/f.csv?sv=2024-11-04&se=2027-01-01&sr=b&sp=r&sig=***");
});

test("data import from a signed URL: its signature never printed, stored or shown in data info; data update says a new signed URL is needed", async () => {
  const body = `${iptoasnTsv(13335)}\n`;
  publisher.publish("/signed/ip2asn.tsv", { body });
  const query = `X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&${SIGNED.map(([name, value]) => `${name}=${value}`).join("&")}`;
  const path = join(dir, "data.db");
  const run = (...args: string[]) => runCliInProcess(join(dir, "no-default.db"), args);

  const imported = await run("data", "import", "--data", path, "--sha256", sha256(new TextEncoder().encode(body)), `${publisher.url}/signed/ip2asn.tsv?${query}`);
  expect(imported.code).toBe(0);
  const info = await run("data", "info", "--data", path);
  const infoJson = await run("data", "info", "--data", path, "--json");
  const db = new Database(path, { readonly: true });
  const recipe = db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'recipe'").get()!.value;
  db.close();
  const file = readFileSync(path, "latin1");
  for (const secret of SECRETS) {
    for (const [what, text] of [["import", imported.stdout + imported.stderr], ["info", info.stdout + infoJson.stdout], ["recipe", recipe], ["file", file]] as const) {
      expect({ secret, what, shown: text.includes(secret) }).toEqual({ secret, what, shown: false });
    }
  }
  expect(recipe).toContain(`${publisher.url}/signed/ip2asn.tsv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600`);

  const before = readFileSync(path);
  const updated = await run("data", "update", "--data", path);
  expect(updated.code).toBe(1);
  expect(updated.stderr).toContain(
    "it was downloaded from a signed URL, whose X-Amz-Signature, X-Amz-Credential, X-Amz-Security-Token, X-Goog-Signature, X-Goog-Credential, Signature, AWSAccessKeyId iplookup does not keep (a signature expires): import it again with a new signed URL ('data import')",
  );
  expect(readFileSync(path)).toEqual(before);
});
