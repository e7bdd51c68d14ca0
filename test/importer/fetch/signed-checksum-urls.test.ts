import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess } from "../../support/in-process-cli.ts";
import { iptoasnTsv, sha256File } from "../../support/download-fixtures.ts";
import { startPublisher } from "../../support/publisher.ts";

/**
 * A `--sha256 URL` that is itself signed, or carries a token, has its secret taken out
 * of the recipe as the source's URL has, and recorded by name: data update refuses an
 * expiring signature with the source's clear message, before downloading anything (it
 * fetched the bare URL and failed with the publisher's 403), and puts back a SAS sig or
 * token from IPLOOKUP_DOWNLOAD_AUTH.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-signed-sums-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A command line run in this process (it reaches the publisher above): its exit code and all it printed. */
async function run(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await runCliInProcess(join(dir, "no-default.db"), args, env);
  return { code, out: stdout + stderr };
}

function fileOf(path: string): Record<string, unknown> {
  const db = new Database(path, { readonly: true });
  const recipe = db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'recipe'").get()!.value;
  db.close();
  return JSON.parse(recipe).sources[0].files[0];
}

/** Publishes the data and its checksum file, this one only at its signed URL. */
function publish(name: string, sums: string, asn: number, at: number): void {
  const body = new TextEncoder().encode(`${iptoasnTsv(asn)}\n`);
  publisher.publish(`/${name}`, { body, modified: new Date(at) });
  publisher.publish(sums, { body: sha256File(body, name) });
}

test("an S3-signed --sha256 URL: data update refuses it with the signed-URL message, fetching nothing, the file byte for byte as it was", async () => {
  const sums = "/sums/a.sha256?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=SUMSSIGNATURE";
  publish("a.tsv", sums, 13335, Date.now());
  const path = join(dir, "a.db");
  const imported = await run({}, "data", "import", "--data", path, "--sha256", `${publisher.url}${sums}`, `${publisher.url}/a.tsv`);
  expect(imported.code).toBe(0);
  expect(JSON.stringify(fileOf(path))).not.toContain("SUMSSIGNATURE");
  expect(fileOf(path).sha256SecretParams).toEqual(["X-Amz-Signature"]);

  publish("a.tsv", sums, 64500, Date.now() + 60_000);
  const before = readFileSync(path);
  publisher.requests.length = 0;
  const updated = await run({}, "data", "update", "--data", path);
  expect(updated.code).toBe(1);
  expect(updated.out).toContain(
    "its checksum (--sha256 URL) was downloaded from a signed URL, whose X-Amz-Signature iplookup does not keep (a signature expires): import it again with a new signed URL ('data import')",
  );
  expect(publisher.requests).toEqual([]);
  expect(readFileSync(path)).toEqual(before);
});

test("a --sha256 URL with a SAS sig: data update puts it back from IPLOOKUP_DOWNLOAD_AUTH, without Basic authentication, and says what to set without it", async () => {
  const sums = "/sums/b.sha256?sv=2024-11-04&se=2030-01-01&sr=b&sp=r&sig=SUMS%2BSAS%3D";
  publish("b.tsv", sums, 13335, Date.now());
  const path = join(dir, "b.db");
  expect((await run({}, "data", "import", "--data", path, "--sha256", `${publisher.url}${sums}`, `${publisher.url}/b.tsv`)).code).toBe(0);
  expect(JSON.stringify(fileOf(path))).not.toContain("SUMS");
  expect(fileOf(path).sha256SecretParams).toEqual(["sig"]);

  publish("b.tsv", sums, 64500, Date.now() + 60_000);
  const refused = await run({}, "data", "update", "--data", path);
  expect(refused.code).toBe(1);
  expect(refused.out).toContain("its checksum (--sha256 URL) was downloaded with its sig in the query, which iplookup does not keep: set IPLOOKUP_DOWNLOAD_AUTH to 127.0.0.1=SIG:");

  publisher.requests.length = 0;
  const updated = await run({ IPLOOKUP_DOWNLOAD_AUTH: "127.0.0.1=SUMS+SAS=:" }, "data", "update", "--data", path);
  expect(updated.code).toBe(0);
  expect(updated.out).toContain("checksum verified");
  const fetched = publisher.requests.filter((request) => request.path.startsWith("/sums/"));
  expect(fetched.map((request) => [request.path, request.headers.authorization])).toEqual([[sums, undefined]]);
  expect(fileOf(path).sha256SecretParams).toEqual(["sig"]);
});
