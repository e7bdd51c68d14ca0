import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { download, DownloadError } from "../../../src/importer/fetch/download.ts";
import { iptoasnTsv } from "../../support/download-fixtures.ts";
import { runCliInProcess } from "../../support/in-process-cli.ts";
import { startPublisher } from "../../support/publisher.ts";

/**
 * A redirect whose Location is not a URL (`http://[zz/x`) is the publisher's fault, and
 * fails the download like any other (CONTRACT §11: the failure names the source and the
 * reason), its secrets hidden as every shown URL's are.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-redirect-location-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const run = (...args: string[]) => runCliInProcess(join(dir, "no-default.db"), args);

test("download: a DownloadError saying the Location is not a valid URL, its secret query parameter hidden", async () => {
  publisher.publish("/moved.tsv", { body: "", redirect: "http://[zz/x?token=hunter2" });
  const failed = await download({ url: `${publisher.url}/moved.tsv` }, join(dir, "download")).then(
    () => null,
    (error: unknown) => error,
  );
  expect(failed).toBeInstanceOf(DownloadError);
  expect((failed as Error).message).toBe('redirected (HTTP 302) to "http://[zz/x?token=***", which is not a valid URL');
});

test("data import and data update: exit 1 naming the source and the bad Location, never a credential; the installed file stays as it was", async () => {
  const path = join(dir, "data.db");
  publisher.publish("/bad.tsv", { body: "", redirect: "http://[zz/x?key=s3cret" });
  const imported = await run("data", "import", "--data", path, `${publisher.url.replace("http://", "http://user:pa55@")}/bad.tsv`);
  expect(imported).toEqual({
    code: 1,
    stdout: "",
    stderr: `iplookup: source 1 (http://***@${publisher.url.slice("http://".length)}/bad.tsv): redirected (HTTP 302) to "http://[zz/x?key=***", which is not a valid URL\n`,
  });

  const url = `${publisher.url}/ip2asn.tsv`;
  publisher.publish("/ip2asn.tsv", { body: `${iptoasnTsv(13335)}\n` });
  expect((await run("data", "import", "--data", path, url)).code).toBe(0);
  const bytes = readFileSync(path);
  publisher.publish("/ip2asn.tsv", { body: "", redirect: "http://[zz/x" });
  const updated = await run("data", "update", "--data", path);
  expect(updated.code).toBe(1);
  expect(updated.stderr).toContain(`iplookup: data update failed: source 1 (${url}): redirected (HTTP 302) to "http://[zz/x", which is not a valid URL; ${path} is left as it was\n`);
  expect(readFileSync(path)).toEqual(bytes);
});
