import { afterAll, expect, test } from "bun:test";
import { closeSync, openSync, readdirSync, ftruncateSync, rmSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { buildDataSet } from "../../../src/importer/build.ts";
import { MAX_FEED_BYTES, MAX_FEED_ENTRIES, MAX_JSON_CONTAINERS, MAX_JSON_FEED_BYTES } from "../../../src/importer/feeds/feed-entry.ts";
import { readFeedPacked } from "../../../src/importer/feeds/read-feed.ts";
import { cliAsync as cli } from "../../support/publisher.ts";
import { fixture, fixtureDir } from "./support.ts";

// A feed's size is bounded so that reading it stays well under CONTRACT §13's 1 GiB
// (feed-entry.ts has the figures measured at the bounds): a file over its bound is
// refused before it is read, a feed listing more blocks than the bound when the one past
// it is read, JSON holding more objects and lists than any feed before it is parsed.

const dir = fixtureDir("bounds");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A file of `size` zero bytes that takes no room on the disk. */
function sparse(name: string, size: number): string {
  const path = join(dir, name);
  const fd = openSync(path, "w");
  ftruncateSync(fd, size);
  closeSync(fd);
  return path;
}

const encode = (text: string) => new TextEncoder().encode(text);

test("the bounds: 64 MiB for a list or geofeed, 16 MiB for JSON, a million blocks, half a million JSON objects and lists", () => {
  expect(MAX_FEED_BYTES).toBe(64 * 2 ** 20);
  expect(MAX_JSON_FEED_BYTES).toBe(16 * 2 ** 20);
  expect(MAX_FEED_ENTRIES).toBe(1_000_000);
  expect(MAX_JSON_CONTAINERS).toBe(500_000);
});

test("a list of a million addresses is read; one more is refused naming the file and the bound", () => {
  const lines: string[] = [];
  for (let i = 0; i < MAX_FEED_ENTRIES; i++) lines.push(`11.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`);
  const list = lines.join("\n");
  const read = readFeedPacked(encode(list), { format: "address-list", file: "exits", feed: { signal: "tor" } });
  expect(read.rows[4]).toBe(MAX_FEED_ENTRIES);
  expect(() => readFeedPacked(encode(`${list}\n12.0.0.0`), { format: "address-list", file: "exits", feed: { signal: "tor" } })).toThrow(
    "exits: the feed lists more than 1,000,000 blocks, more than any feed of addresses (the largest public ones list a few hundred thousand)",
  );
});

test("the bound on blocks holds for every format (here a smaller one, as a parameter)", () => {
  const aws = (count: number) =>
    JSON.stringify({
      syncToken: "1",
      createDate: "2026-11-24-22-13-08",
      prefixes: Array.from({ length: count }, (_, i) => ({ ip_prefix: `3.5.${i}.0/24`, region: "us-east-1", service: "EC2", network_border_group: "us-east-1" })),
    });
  expect(readFeedPacked(encode(aws(3)), { format: "aws-ip-ranges", file: "ip-ranges.json", maxEntries: 3 }).rows[4]).toBe(3);
  expect(() => readFeedPacked(encode(aws(4)), { format: "aws-ip-ranges", file: "ip-ranges.json", maxEntries: 3 })).toThrow("ip-ranges.json: the feed lists more than 3 blocks");
  const geofeed = "1.2.3.0/24,US,,,\n1.2.4.0/24,US,,,\n";
  expect(() => readFeedPacked(encode(geofeed), { format: "geofeed", file: "geo.csv", feed: { signal: "relay", service: "Relay" }, maxEntries: 1 })).toThrow("geo.csv: the feed lists more than 1 blocks");
});

test("a file over its bound is refused before it is read: a list over 64 MiB, a JSON feed over 16 MiB", async () => {
  const list = sparse("huge-list", MAX_FEED_BYTES + 1);
  await expect(buildDataSet([{ files: [{ path: list, format: "address-list" }], feed: { signal: "tor" } }], new Date())).rejects.toThrow(
    "huge-list: 67,108,865 bytes is larger than any feed of addresses (at most 67,108,864)",
  );
  const json = sparse("huge.json", MAX_JSON_FEED_BYTES + 1);
  await expect(buildDataSet([{ files: [{ path: json, format: "aws-ip-ranges" }] }], new Date())).rejects.toThrow(
    "huge.json: 16,777,217 bytes is larger than any feed of addresses (at most 16,777,216)",
  );
  // As bytes, too (the bound applies however the feed arrives).
  expect(() => readFeedPacked(new Uint8Array(MAX_JSON_FEED_BYTES + 1), { format: "google-cloud", file: "cloud.json" })).toThrow("cloud.json: 16,777,217 bytes is larger");
});

test("JSON holding more objects and lists than any feed is refused before it is parsed", async () => {
  const json = (count: number) => `{"syncToken":"1","createDate":"2026-11-24-22-13-08","prefixes":[${"{},".repeat(count - 3)}{}]}`;
  // The top-level object and the list, and the rest empty objects: exactly the bound is parsed (and refused for what it is).
  expect(() => readFeedPacked(encode(json(MAX_JSON_CONTAINERS)), { format: "aws-ip-ranges", file: "ip-ranges.json" })).toThrow('ip-ranges.json: prefixes[0] is not {"ip_prefix", "region", "service", …}');
  const path = fixture(dir, "objects.json", json(MAX_JSON_CONTAINERS + 1));
  await expect(buildDataSet([{ files: [{ path, format: "aws-ip-ranges" }] }], new Date())).rejects.toThrow("objects.json: the JSON holds more than 500,000 objects and lists, more than any AWS ip-ranges.json");
  // Brackets inside strings are not counted.
  const brackets = JSON.stringify({ syncToken: "1", createDate: "2026-11-24-22-13-08", prefixes: [{ ip_prefix: "3.5.0.0/16", region: "us-east-1", service: "EC2", network_border_group: "{[".repeat(10) + '\\"[' }] });
  expect(readFeedPacked(encode(brackets), { format: "aws-ip-ranges", file: "ip-ranges.json" }).rows[4]).toBe(1);
});

test("data import of a feed over its bound exits 1 naming the file and the bound, and leaves nothing behind", async () => {
  const work = join(dir, "import");
  mkdirSync(work);
  const list = sparse("import-list", MAX_FEED_BYTES + 1);
  const refused = await cli(["data", "import", "--data", join(work, "data.db"), "--signal", "tor", "--format", "address-list", list]);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toContain(`${list}: 67,108,865 bytes is larger than any feed of addresses (at most 67,108,864)`);
  expect(readdirSync(work)).toEqual([]);
}, 30_000);
