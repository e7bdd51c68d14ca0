import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { checkAsn, classifyAsn, parseAsn } from "../../src/asn/asn-number.ts";
import { asnIndexOf } from "../../src/asn/asn-index.ts";
import { AsnService } from "../../src/asn/asn-service.ts";
import { coverIpv4, coverIpv6 } from "../../src/asn/cidr-cover.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { writeDataFile } from "../../src/importer/data-file.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { defaultIndex } from "../support/default-data.ts";
import { writeSmallSources } from "../support/small-dataset.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-asn-service-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

test("AS numbers: the accepted forms and the edges of 32 bits", () => {
  expect(["0", "13335", "AS13335", "as13335", "aS1", "4294967295"].map(parseAsn)).toEqual([0, 13335, 13335, 13335, 1, 4294967295]);
  for (const bad of ["", "AS", "4294967296", "01", "AS01", "+1", "-1", " 1", "1 ", "1.5", "0x1", "１", "AS 1", "ASN1", "1e3", "99999999999"]) expect({ bad, asn: parseAsn(bad) }).toEqual({ bad, asn: null });
  expect(checkAsn("AS23456")).toEqual({ ok: false, code: "asn_not_public", asn: 23456, reason: "as-trans" });
  expect([64495, 64496, 131071, 131072, 4199999999, 4200000000].map(classifyAsn)).toEqual([null, "documentation", "reserved", null, null, "private-use"]);
});

test("CIDR cover: the fewest blocks, aligned, for intervals at the ends of the space", () => {
  const v4: string[] = [];
  coverIpv4(0, 0xffffffff, (network, prefix) => v4.push(`${network}/${prefix}`));
  expect(v4).toEqual(["0/0"]);
  v4.length = 0;
  coverIpv4(1, 6, (network, prefix) => v4.push(`${network}/${prefix}`));
  expect(v4).toEqual(["1/32", "2/31", "4/31", "6/32"]);
  v4.length = 0;
  coverIpv4(0xfffffffe, 0xffffffff, (network, prefix) => v4.push(`${network}/${prefix}`));
  expect(v4).toEqual([`${0xfffffffe}/31`]);
  const v6: string[] = [];
  coverIpv6(0n, (1n << 128n) - 1n, (network, prefix) => v6.push(`${network}/${prefix}`));
  expect(v6).toEqual(["0/0"]);
  v6.length = 0;
  coverIpv6((1n << 64n) + 1n, (1n << 65n), (network, prefix) => v6.push(`${network}/${prefix}`));
  expect(v6.length).toBe(65);
  expect(v6[0]).toBe(`${(1n << 64n) + 1n}/128`);
  expect(v6.at(-1)).toBe(`${1n << 65n}/128`);
});

test("answers are kept per data set: the same bytes again, and a reload starts over", async () => {
  const small = join(dir, "small.db");
  writeDataFile(small, await buildDataSet(writeSmallSources(dir), new Date("2026-01-01T00:00:00Z")));
  let index: RangeIndex = defaultIndex();
  const service = new AsnService(() => index);
  const first = (await service.answer(4134));
  const large = (await service.answer(4134));
  expect((await service.answer(4134))).toBe(large);
  expect(text(large.body)).toBe(text(first.body));
  // A kept answer holds its own bytes, not a view of a larger buffer.
  expect(large.body.buffer.byteLength).toBe(large.body.byteLength);
  const before = text((await service.answer(13335)).body);
  index = RangeIndex.open(small);
  const after = JSON.parse(text((await service.answer(13335)).body)) as { prefixes: string[]; num_ips: number };
  expect(text((await service.answer(13335)).body)).not.toBe(before);
  expect(after.prefixes).toEqual(["1.0.0.0/25", "1.0.0.144/28", "1.0.0.160/27", "1.0.0.192/26"]);
  expect(after.num_ips).toBe(240);
  expect(JSON.parse(text((await service.answer(4134)).body))).toMatchObject({ asn: 4134, found: false });
});

test("hosting: true for an AS the data's hosting list names, false for one it does not, null without a list", async () => {
  const index = defaultIndex();
  const asns = asnIndexOf(index);
  for (const asn of [16509, 14061]) {
    expect(index.hostingOfAsn(asn)).toBe(true);
    expect(asns.result(asn)).toMatchObject({ found: true, hosting: true });
  }
  expect(index.hostingOfAsn(112)).toBe(false);
  expect(asns.result(112)).toMatchObject({ found: true, hosting: false });
  // A data file built without a hosting list (the small test set) says nothing either way.
  const small = join(dir, "no-list.db");
  writeDataFile(small, await buildDataSet(writeSmallSources(dir), new Date("2026-01-01T00:00:00Z")));
  const bare = RangeIndex.open(small);
  expect(bare.hostingOfAsn(16509)).toBeNull();
  expect(asnIndexOf(bare).result(13335)).toMatchObject({ found: true, hosting: null });
});

test("hosting: a hosting feed by address block is no list of AS numbers, so the AS answer stays null while lookups in the feed's blocks say true", async () => {
  // What the AS answer's hosting means (an AS the data's list of hosting providers' AS
  // numbers names) has no other source: a block feed covers some of an AS's addresses
  // and says nothing of the AS as a whole.
  const sub = mkdtempSync(join(dir, "block-feed-"));
  const feed = join(sub, "hosting.txt");
  writeFileSync(feed, "1.0.0.0/25\n");
  const path = join(sub, "data.db");
  writeDataFile(path, await buildDataSet([{ files: [{ path: feed }], feed: { signal: "hosting", service: "Example" } }, ...writeSmallSources(sub)], new Date("2026-01-01T00:00:00Z")));
  const index = RangeIndex.open(path);
  expect(index.lookup(parseAddress("1.0.0.1")!)?.record).toMatchObject({ asn: 13335, privacy: { hosting: true, service: "Example" } });
  expect(index.lookup(parseAddress("1.0.0.200")!)?.record).toMatchObject({ asn: 13335, privacy: { hosting: false, service: null } });
  expect(index.hostingOfAsn(13335)).toBeNull();
  expect(asnIndexOf(index).result(13335)).toMatchObject({ found: true, hosting: null });
});
