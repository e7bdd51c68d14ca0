import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iptoasnTsv } from "../support/download-fixtures.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { startPublisher } from "../support/publisher.ts";
import { cli } from "../support/server-process.ts";

/**
 * A data file with a source every update refuses (an S3 or Google signed URL, whose
 * signature is not stored) is refused by `serve --update-every` at start and by `config
 * check`, with exit 2 and data update's reason, as a file with no recipe is: it was
 * served, and logged "data update failed" at error level every interval. A SAS source,
 * whose sig IPLOOKUP_DOWNLOAD_AUTH gives, is accepted.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-unupdatable-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const run = (...args: string[]) => runCliInProcess(join(dir, "no-default.db"), args);

async function imported(name: string, query: string): Promise<string> {
  publisher.publish(`/${name}.tsv?${query}`, { body: `${iptoasnTsv(13335)}\n` });
  const path = join(dir, `${name}.db`);
  const result = await run("data", "import", "--data", path, `${publisher.url}/${name}.tsv?${query}`);
  expect(result).toMatchObject({ code: 0 });
  return path;
}

test("an S3-signed source: serve --update-every and config check refuse it with exit 2; a SAS source passes", async () => {
  const s3 = await imported("s3", "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Credential=AKIAEXAMPLE&X-Amz-Signature=S3SIGNATURE");
  const reason = `--update-every: ${s3} cannot be updated: source 1 (${publisher.url}/s3.tsv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600): it was downloaded from a signed URL, whose X-Amz-Credential, X-Amz-Signature iplookup does not keep (a signature expires): import it again with a new signed URL ('data import')`;

  const config = join(dir, "s3.toml");
  writeFileSync(config, `data = "${s3}"\nupdate-every = "24h"\n`);
  const checked = await run("config", "check", "--config", config);
  expect(checked.code).toBe(2);
  expect(checked.stderr).toContain(reason);

  // Killed after 60 s (cli's bound) if it serves instead.
  const served = cli(["serve", "--data", s3, "--update-every", "24h", "--host", "127.0.0.1", "--port", "0", "--workers", "1", "--state", join(dir, "state.db")]);
  expect({ code: served.code, stderr: served.stderr }).toEqual({ code: 2, stderr: `iplookup: ${reason}\n` });

  const sas = await imported("sas", "sv=2024-11-04&se=2030-01-01&sr=b&sp=r&sig=SASSIG");
  const sasConfig = join(dir, "sas.toml");
  writeFileSync(sasConfig, `data = "${sas}"\nupdate-every = "24h"\n`);
  expect(await run("config", "check", "--config", sasConfig)).toMatchObject({ code: 0 });
}, 90_000);
