import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess } from "../../support/in-process-cli.ts";
import { iptoasnTsv } from "../../support/download-fixtures.ts";
import { startPublisher } from "../../support/publisher.ts";

/**
 * An Azure SAS URL's sig is its only secret, and a SAS may be valid for years: it is
 * hidden and stored without its value as a token is, and data update puts it back from
 * IPLOOKUP_DOWNLOAD_AUTH (HOST=SIG:), so such a source keeps updating.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-sas-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const SAS = "sv=2024-11-04&se=2030-01-01&sr=b&sp=r&sig=LONG%2BLIVED%2FSAS%3D";

/** A command line run in this process (it reaches the publisher above): its exit code and all it printed. */
async function run(env: Record<string, string>, ...args: string[]): Promise<{ code: number; out: string }> {
  const { code, stdout, stderr } = await runCliInProcess(join(dir, "no-default.db"), args, env);
  return { code, out: stdout + stderr };
}

function recipeOf(path: string): string {
  const db = new Database(path, { readonly: true });
  try {
    return db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'recipe'").get()!.value;
  } finally {
    db.close();
  }
}

test("a SAS source updates again and again with its sig given in IPLOOKUP_DOWNLOAD_AUTH, encoded or not, and never as Basic authentication", async () => {
  // Only the URL with the right sig answers: the path alone is 404.
  publisher.publish(`/sas/ip2asn.tsv?${SAS}`, { body: `${iptoasnTsv(13335)}\n` });
  const path = join(dir, "data.db");
  const imported = await run({}, "data", "import", "--data", path, `${publisher.url}/sas/ip2asn.tsv?${SAS}`);
  expect(imported.code).toBe(0);
  expect(recipeOf(path)).not.toContain("LONG");
  expect(JSON.parse(recipeOf(path)).sources[0].files[0]).toMatchObject({ location: `${publisher.url}/sas/ip2asn.tsv?sv=2024-11-04&se=2030-01-01&sr=b&sp=r`, secretParams: ["sig"] });

  // Without it: refused, saying how to give it; the file as it was.
  const before = readFileSync(path);
  const refused = await run({}, "data", "update", "--data", path);
  expect(refused.code).toBe(1);
  expect(refused.out).toContain("it was downloaded from an Azure SAS URL, whose sig iplookup does not keep: set IPLOOKUP_DOWNLOAD_AUTH to 127.0.0.1=SIG: (the sig value, as in the URL)");
  expect(readFileSync(path)).toEqual(before);

  // As copied from the URL (percent-encoded), then decoded: each update downloads a new file and installs it.
  for (const [i, sig] of ["LONG%2BLIVED%2FSAS%3D", "LONG+LIVED/SAS="].entries()) {
    publisher.publish(`/sas/ip2asn.tsv?${SAS}`, { body: `${iptoasnTsv(64500 + i)}\n`, modified: new Date(Date.now() + (i + 1) * 60_000) });
    publisher.requests.length = 0;
    const updated = await run({ IPLOOKUP_DOWNLOAD_AUTH: `127.0.0.1=${sig}:` }, "data", "update", "--data", path);
    expect({ i, code: updated.code, out: updated.out }).toEqual({ i, code: 0, out: expect.stringContaining("changed: source 1") });
    expect(updated.out).not.toContain("LONG");
    const sas = publisher.requests.filter((request) => request.path.startsWith("/sas/ip2asn.tsv?"));
    expect(sas.map((request) => request.path)).toContain(`/sas/ip2asn.tsv?${SAS}`);
    expect(sas.map((request) => request.headers.authorization)).toEqual(sas.map(() => undefined));
    expect(recipeOf(path)).not.toContain("LONG");
    expect(JSON.parse(recipeOf(path)).sources[0].files[0].secretParams).toEqual(["sig"]);
  }
});
