import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iptoasnTsv } from "../support/download-fixtures.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";
import { startPublisher } from "../support/publisher.ts";

/**
 * `data info` says what `data update` needs for a signed source: for a SAS, its sig in
 * IPLOOKUP_DOWNLOAD_AUTH as HOST=SIG:; for an S3 or Google signed URL, whose signature
 * nothing brings back, a new import. It said "(with credentials: IPLOOKUP_DOWNLOAD_AUTH)"
 * for both.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-signed-info-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const S3 = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600&X-Amz-Signature=S3SIGNATURE";
const SAS = "sv=2024-11-04&se=2030-01-01&sr=b&sp=r&sig=SASSIG";

test("data info names the SAS's sig setting and says an S3-signed source needs a new signed URL", async () => {
  publisher.publish(`/s3.tsv?${S3}`, { body: `${iptoasnTsv(13335)}\n` });
  publisher.publish(`/sas.tsv?${SAS}`, { body: `${iptoasnTsv(15169)}\n` });
  const path = join(dir, "data.db");
  const run = (...args: string[]) => runCliInProcess(join(dir, "no-default.db"), args);
  expect(await run("data", "import", "--data", path, `${publisher.url}/s3.tsv?${S3}`, `${publisher.url}/sas.tsv?${SAS}`)).toMatchObject({ code: 0 });
  const info = await run("data", "info", "--data", path);
  expect(info.stdout).toContain(`1. ${publisher.url}/s3.tsv?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Expires=3600 (a signed URL: import again with a new one)\n`);
  expect(info.stdout).toContain(`2. ${publisher.url}/sas.tsv?sv=2024-11-04&se=2030-01-01&sr=b&sp=r (with credentials: the SAS's sig, as IPLOOKUP_DOWNLOAD_AUTH=127.0.0.1=SIG:)\n`);
  expect(info.stdout).not.toContain("SASSIG");
});
