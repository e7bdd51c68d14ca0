import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { acquireFile, type AcquireContext } from "../../../src/importer/fetch/acquire.ts";
import { checksumPlaces } from "../../../src/importer/fetch/checksum.ts";
import { ExpansionBudget } from "../../../src/importer/fetch/expansion.ts";
import { DownloadAuth } from "../../../src/importer/fetch/locations.ts";
import { gzip, iptoasnTsv, sha256 } from "../../support/download-fixtures.ts";
import { startPublisher } from "../../support/publisher.ts";

/**
 * CONTRACT §13, checksums never skipped silently: a publisher's checksum is looked for at
 * the URL with `.sha256` appended as text and, for a URL with a query, at its path with
 * `.sha256` before the query. 404 or 403 at every place: none published, and said; found
 * at either: it must match; any other failure of a probe refuses; the output names the
 * checksum verified; --require-checksum refuses a source without one.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-checksum-probes-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const BODY = gzip(iptoasnTsv(13335));
const RIGHT = sha256(BODY);
const WRONG = "0".repeat(64);

function context(options: Partial<AcquireContext> = {}): AcquireContext & { lines: string[] } {
  const lines: string[] = [];
  return {
    workDir: mkdtempSync(join(dir, "work-")),
    auth: DownloadAuth.none(),
    now: new Date(),
    progress: { line: (message) => lines.push(message), update() {} },
    budget: new ExpansionBudget(),
    lines,
    ...options,
  };
}

let n = 0;
/** A download published at a path of its own, its checksum places as `places` says. */
function published(query: string, places: { appended?: { status?: number; body?: string; trickleMs?: number }; path?: { status?: number; body?: string } }) {
  const path = `/c${++n}/ip2asn.tsv.gz`;
  publisher.publish(`${path}${query}`, { body: BODY });
  if (places.appended) publisher.publish(`${path}${query}.sha256`, { body: places.appended.body ?? "", ...places.appended });
  if (places.path) publisher.publish(`${path}.sha256${query}`, { body: places.path.body ?? "", ...places.path });
  return `${publisher.url}${path}${query}`;
}
const fetchIt = (url: string, ctx = context()) => acquireFile({ location: url }, ctx);

describe("where a published checksum is looked for", () => {
  test("the places: URL.sha256 as text, and for a URL with a query its path's .sha256 before the query", () => {
    expect(checksumPlaces("https://h/x.mmdb.gz")).toEqual(["https://h/x.mmdb.gz.sha256"]);
    expect(checksumPlaces("https://h/geoip/download?suffix=tar.gz")).toEqual(["https://h/geoip/download?suffix=tar.gz.sha256", "https://h/geoip/download.sha256?suffix=tar.gz"]);
    expect(checksumPlaces("https://h/f.csv.gz?token=T")).toEqual(["https://h/f.csv.gz?token=T.sha256", "https://h/f.csv.gz.sha256?token=T"]);
  });

  test("MaxMind's form (?suffix=tar.gz.sha256): verified, and the output names the checksum and where it came from", async () => {
    const url = published("?suffix=tar.gz", { appended: { body: `${RIGHT}  ip2asn_20261120.tsv.gz\n` } });
    const ctx = context();
    expect(await fetchIt(url, ctx)).not.toBeNull();
    expect(ctx.lines).toContain(`checksum verified: SHA-256 ${RIGHT} (from ${url}.sha256)`);
  });

  test("a query the server ignores (what answers at ?token=T.sha256 is the download itself): the path's .sha256 is looked at, and must match", async () => {
    // The publisher answers a query it does not know with the path's file: the download.
    const right = published("?token=T", { path: { body: `${RIGHT}  ip2asn.tsv.gz\n` } });
    const ctx = context();
    await fetchIt(right, ctx);
    expect(ctx.lines.join("\n")).toContain(`checksum verified: SHA-256 ${RIGHT} (from ${publisher.url}/c${n}/ip2asn.tsv.gz.sha256?token=***)`);
    const wrong = published("?token=T", { path: { body: `${WRONG}  ip2asn.tsv.gz\n` } });
    await expect(fetchIt(wrong)).rejects.toThrow(`its SHA-256 is ${RIGHT}, but ${publisher.url}/c${n}/ip2asn.tsv.gz.sha256?token=*** says ${WRONG}: refused`);
  });

  test("403 at the first place (a bucket that hides what it lacks), a wrong checksum at the second: refused", async () => {
    const url = published("?X-Amz-Signature=abc", { appended: { status: 403 }, path: { body: WRONG } });
    await expect(fetchIt(url)).rejects.toThrow(`but ${publisher.url}/c${n}/ip2asn.tsv.gz.sha256?X-Amz-Signature=*** says ${WRONG}: refused`);
  });

  test("404 or 403 at every place: none published, said so; --require-checksum refuses", async () => {
    for (const status of [404, 403]) {
      const url = published("?v=1", { appended: { status }, path: { status } });
      const ctx = context();
      expect(await fetchIt(url, ctx)).not.toBeNull();
      expect(ctx.lines).toContain(`no checksum published (nothing at ${url}.sha256 or ${publisher.url}/c${n}/ip2asn.tsv.gz.sha256?v=1): not verified`);
      await expect(fetchIt(url, context({ requireChecksum: true }))).rejects.toThrow(/no checksum is published for it \(nothing at .*\) and --require-checksum is given: refused/);
    }
    // Without a query, one place.
    const plain = published("", {});
    const ctx = context();
    await fetchIt(plain, ctx);
    expect(ctx.lines).toContain(`no checksum published (nothing at ${plain}.sha256): not verified`);
  });

  test("any other failure of a probe refuses: a 500 at the second place, a 401, a probe that does not end", async () => {
    const failing = published("?v=1", { appended: { status: 404 }, path: { status: 500 } });
    await expect(fetchIt(failing)).rejects.toThrow(`its checksum could not be looked for at ${publisher.url}/c${n}/ip2asn.tsv.gz.sha256?v=1: HTTP 500 Internal Server Error; refused`);
    const unauthorized = published("", { appended: { status: 401 } });
    await expect(fetchIt(unauthorized)).rejects.toThrow("HTTP 401");
    const slow = published("", { appended: { body: `${RIGHT}\n`, trickleMs: 100 } });
    await expect(fetchIt(slow, context({ timeouts: { timeoutMs: 1000 } }))).rejects.toThrow(/its checksum could not be looked for at .*: .*it did not end within --download-timeout 1 s/);
  });

  test("200 with no checksum line (a page), a blank body, or more than 1 MiB is not 'none published': refused naming the place and what it answered", async () => {
    const page = published("", { appended: { body: "<html><body>Not here</body></html>\n" } });
    await expect(fetchIt(page)).rejects.toThrow(
      `its checksum could not be read: ${page}.sha256 answered HTTP 200 with 35 bytes ("<html><body>Not here</body></html>"), which holds no SHA-256 line; only 404 or 403 means none is published; refused`,
    );
    const blank = published("", { appended: { body: "" } });
    await expect(fetchIt(blank)).rejects.toThrow(`its checksum could not be read: ${blank}.sha256 answered HTTP 200 with an empty body, which holds no SHA-256 line`);
    const large = published("", { appended: { body: `${RIGHT}  ip2asn.tsv.gz\n${"#".repeat(1024 * 1024)}\n` } });
    await expect(fetchIt(large)).rejects.toThrow(`its checksum could not be read: ${large}.sha256 answered HTTP 200 with more than 1,048,576 bytes, which is no checksum file`);
    // Under --require-checksum too: the reason is what was answered, not that none is published.
    await expect(fetchIt(page, context({ requireChecksum: true }))).rejects.toThrow("answered HTTP 200 with 35 bytes");
  });

  test("a server that answers URL.sha256 with the download itself and 404 at the path's place: refused, not taken as none", async () => {
    // The publisher answers a query it does not know with the path's file: the download.
    const url = published("?token=T", {});
    publisher.publish(`/c${n}/ip2asn.tsv.gz`, { body: BODY });
    await expect(fetchIt(url)).rejects.toThrow(`its checksum could not be read: ${publisher.url}/c${n}/ip2asn.tsv.gz?token=***.sha256 answered HTTP 200 with ${BODY.length} bytes of binary data, which holds no SHA-256 line; only 404 or 403 means none is published; refused`);
  });

  test("a secret in the query: each place probed is named with the secret hidden and its .sha256 in sight, never as the download's own URL", async () => {
    const none = published("?token=T", { appended: { status: 404 }, path: { status: 404 } });
    const ctx = context();
    await fetchIt(none, ctx);
    expect(ctx.lines).toContain(`no checksum published (nothing at ${publisher.url}/c${n}/ip2asn.tsv.gz?token=***.sha256 or ${publisher.url}/c${n}/ip2asn.tsv.gz.sha256?token=***): not verified`);
    const failing = published("?token=T", { appended: { status: 500 } });
    await expect(fetchIt(failing)).rejects.toThrow(`its checksum could not be looked for at ${publisher.url}/c${n}/ip2asn.tsv.gz?token=***.sha256: HTTP 500`);
    const found = published("?token=T", { appended: { body: `${RIGHT}  ip2asn.tsv.gz\n` } });
    const verified = context();
    await fetchIt(found, verified);
    expect(verified.lines).toContain(`checksum verified: SHA-256 ${RIGHT} (from ${publisher.url}/c${n}/ip2asn.tsv.gz?token=***.sha256)`);
  });

  test("a list of checksums that names other files only is refused, not taken as none", async () => {
    const url = published("", { appended: { body: `${WRONG}  a.tsv.gz\n${"1".repeat(64)}  b.tsv.gz\n` } });
    await expect(fetchIt(url)).rejects.toThrow("lists checksums, none of them for ip2asn.tsv.gz; refused");
  });
});

describe("a checksum the operator names", () => {
  test("--sha256 URL whose file names no checksum for the download: refused, never a pass", async () => {
    const url = published("", {});
    publisher.publish(`/sums-${n}`, { body: `${WRONG}  a.tsv.gz\n${"1".repeat(64)}  b.tsv.gz\n` });
    await expect(acquireFile({ location: url, sha256: `${publisher.url}/sums-${n}` }, context())).rejects.toThrow("the checksum file holds no SHA-256 for ip2asn.tsv.gz");
    publisher.publish(`/empty-${n}`, { body: "<html>nothing</html>" });
    await expect(acquireFile({ location: url, sha256: `${publisher.url}/empty-${n}` }, context())).rejects.toThrow("the checksum file holds no SHA-256 for ip2asn.tsv.gz");
    // A local file checked against such a file: the same.
    const local = join(dir, "local.tsv.gz");
    writeFileSync(local, BODY);
    await expect(acquireFile({ location: local, sha256: `${publisher.url}/sums-${n}` }, context())).rejects.toThrow("the checksum file holds no SHA-256 for local.tsv.gz");
    // The one naming it counts.
    publisher.publish(`/sums-${n}`, { body: `${WRONG}  a.tsv.gz\n${RIGHT}  ip2asn.tsv.gz\n` });
    const ctx = context();
    expect(await acquireFile({ location: url, sha256: `${publisher.url}/sums-${n}` }, ctx)).not.toBeNull();
    expect(ctx.lines).toContain(`checksum verified: SHA-256 ${RIGHT} (from --sha256)`);
  });

  test("a local file: its .sha256 beside it must name it; none beside is said, and refused under --require-checksum", async () => {
    const local = join(dir, "beside.tsv.gz");
    writeFileSync(local, BODY);
    const ctx = context();
    await acquireFile({ location: local }, ctx);
    expect(ctx.lines).toContain(`no checksum published (nothing at ${local}.sha256): not verified`);
    await expect(acquireFile({ location: local }, context({ requireChecksum: true }))).rejects.toThrow("--require-checksum is given: refused");
    writeFileSync(`${local}.sha256`, `${WRONG}  a.tsv.gz\n${"1".repeat(64)}  b.tsv.gz\n`);
    await expect(acquireFile({ location: local }, context())).rejects.toThrow(`${local}.sha256 holds no SHA-256 for beside.tsv.gz; refused`);
    writeFileSync(`${local}.sha256`, `${RIGHT}  beside.tsv.gz\n`);
    expect(await acquireFile({ location: local }, context({ requireChecksum: true }))).not.toBeNull();
  });
});
