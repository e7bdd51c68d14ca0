import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { acquireFile, type AcquireContext } from "../../../src/importer/fetch/acquire.ts";
import { ExpansionBudget } from "../../../src/importer/fetch/expansion.ts";
import { DownloadAuth } from "../../../src/importer/fetch/locations.ts";
import { gzip, iptoasnTsv } from "../../support/download-fixtures.ts";
import { startPublisher } from "../../support/publisher.ts";

/**
 * How `data update` tells that a file changed (acquireFile with the recipe's record):
 * a local file is unchanged only when its size and its modification time both match
 * (else its SHA-256 decides); a download is asked conditionally only with the
 * validators of the same URL.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-acquire-changes-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

function context(now = new Date()): AcquireContext {
  return { workDir: mkdtempSync(join(dir, "work-")), auth: DownloadAuth.none(), now, budget: new ExpansionBudget() };
}

describe("a local source", () => {
  const ROW = (asn: number) => `1.0.0.0,1.0.0.255,${asn},Example\n`;

  test("unchanged only when size and time both match; a match of one alone is looked at (SHA-256)", async () => {
    const file = join(dir, "asn.csv");
    writeFileSync(file, ROW(64500));
    const first = await acquireFile({ location: file }, context());
    const previous = first?.acquired.record;
    if (!previous) throw new Error("not fetched");
    expect(await acquireFile({ location: file }, context(), previous)).toBeNull();

    // The same size, other bytes, another time: changed.
    writeFileSync(file, ROW(64501));
    utimesSync(file, new Date(Date.parse(previous.fetched.mtime as string) + 5000), new Date(Date.parse(previous.fetched.mtime as string) + 5000));
    expect(statSync(file).size).toBe(previous.fetched.size);
    expect((await acquireFile({ location: file }, context(), previous))?.changed).toBe(true);

    // The same time, another size: changed.
    writeFileSync(file, ROW(6450000));
    utimesSync(file, new Date(previous.fetched.mtime as string), new Date(previous.fetched.mtime as string));
    expect(statSync(file).mtime.toISOString()).toBe(previous.fetched.mtime as string);
    expect(statSync(file).size).not.toBe(previous.fetched.size);
    expect((await acquireFile({ location: file }, context(), previous))?.changed).toBe(true);

    // Other bytes, the same size and the same time (a copy that kept the time): its
    // size and time say unchanged, and that is what is taken.
    writeFileSync(file, ROW(64502));
    utimesSync(file, new Date(previous.fetched.mtime as string), new Date(previous.fetched.mtime as string));
    expect(await acquireFile({ location: file }, context(), previous)).toBeNull();
  });
});

describe("a download whose URL changed", () => {
  test("a template's new month is asked without the last month's validators (the same bytes there would answer 304)", async () => {
    const body = gzip(iptoasnTsv(13335));
    const modified = new Date("2026-10-01T00:00:00Z");
    publisher.publish("/free/ip2asn-2026-10.tsv.gz", { body, modified });
    publisher.publish("/free/ip2asn-2026-11.tsv.gz", { body, modified });
    const location = `${publisher.url}/free/ip2asn-{YYYY}-{MM}.tsv.gz`;
    const october = await acquireFile({ location }, context(new Date("2026-10-15T00:00:00Z")));
    const previous = october?.acquired.record;
    if (!previous) throw new Error("not fetched");
    expect(previous.fetched.etag).toBeDefined();
    expect(previous.fetched.lastModified).toBeDefined();
    // October again: asked conditionally, unchanged.
    expect(await acquireFile({ location }, context(new Date("2026-10-20T00:00:00Z")), previous)).toBeNull();
    expect(publisher.requests.at(-1)?.headers["if-none-match"]).toBe(previous.fetched.etag as string);

    // November: another URL, asked plainly, and fetched.
    const november = await acquireFile({ location }, context(new Date("2026-11-02T00:00:00Z")), previous);
    const asked = publisher.requests.filter((request) => request.path === "/free/ip2asn-2026-11.tsv.gz").at(-1)?.headers ?? {};
    expect(asked["if-none-match"]).toBeUndefined();
    expect(asked["if-modified-since"]).toBeUndefined();
    expect(november).not.toBeNull();
    expect(november?.acquired.record.fetched.url).toBe(`${publisher.url}/free/ip2asn-2026-11.tsv.gz`);
  });

  test("a recipe's location that now names another file is asked without the old one's validators", async () => {
    const body = gzip(iptoasnTsv(13335));
    publisher.publish("/old/ip2asn.tsv.gz", { body });
    publisher.publish("/new/ip2asn.tsv.gz", { body });
    const previous = (await acquireFile({ location: `${publisher.url}/old/ip2asn.tsv.gz` }, context()))?.acquired.record;
    if (!previous) throw new Error("not fetched");
    const moved = await acquireFile({ location: `${publisher.url}/new/ip2asn.tsv.gz` }, context(), previous);
    const asked = publisher.requests.at(-2)?.headers ?? {};
    expect(publisher.requests.at(-2)?.path).toBe("/new/ip2asn.tsv.gz");
    expect(asked["if-none-match"]).toBeUndefined();
    expect(asked["if-modified-since"]).toBeUndefined();
    expect(moved).not.toBeNull();
  });
});
