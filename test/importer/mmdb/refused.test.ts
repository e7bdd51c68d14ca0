import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { readMmdb } from "../../../src/importer/mmdb/read-mmdb.ts";
import { setRecord, uint16, writeMmdb, type MmdbOptions } from "../../support/mmdb-writer.ts";
import { random } from "./support.ts";

const COMBINED = "node_modules/@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb";
const MARKER = Buffer.from("\xAB\xCD\xEFMaxMind.com", "latin1");

/** Reading must throw an Error whose message starts with the file name, and return nothing. */
function refused(bytes: Uint8Array, reason: RegExp): void {
  let result: unknown;
  let error: unknown;
  try {
    result = readMmdb(bytes, "bad.mmdb");
  } catch (thrown) {
    error = thrown;
  }
  expect(result).toBeUndefined();
  expect(error).toBeInstanceOf(Error);
  const message = (error as Error).message;
  expect(message.startsWith("bad.mmdb: ")).toBe(true);
  expect(message).toMatch(reason);
}

const small: MmdbOptions = {
  ipVersion: 6,
  recordSize: 24,
  networks: [
    { network: "1.0.0.0/24", value: { country_code: "AU" } },
    { network: "2001:db8::/32", value: { country_code: "NL" } },
  ],
};

test("an empty file", () => refused(new Uint8Array(0), /not a MaxMind DB file/));

test("random bytes", () => {
  const next = random(1);
  refused(Uint8Array.from({ length: 100_000 }, () => Math.floor(next() * 256)), /not a MaxMind DB file/);
});

test("a real file cut in the middle, or just before its metadata", () => {
  const bytes = new Uint8Array(readFileSync(COMBINED));
  refused(bytes.subarray(0, bytes.length >> 1), /not a MaxMind DB file/);
  refused(bytes.subarray(0, Buffer.from(bytes).lastIndexOf(MARKER)), /not a MaxMind DB file/);
});

test("a real file cut inside its metadata", () => {
  const bytes = new Uint8Array(readFileSync(COMBINED));
  const metadataStart = Buffer.from(bytes).lastIndexOf(MARKER) + MARKER.length;
  for (let cut = metadataStart; cut < bytes.length; cut += 5) refused(bytes.subarray(0, cut), /truncated or damaged: the metadata/);
});

test("a real file with part of its search tree overwritten", () => {
  const bytes = new Uint8Array(readFileSync(COMBINED));
  bytes.fill(0xff, 3_000_000, 3_004_096);
  refused(bytes, /truncated or damaged: record \d+ points outside the data section/);
});

test("a real file whose search tree points back to the root", () => {
  const bytes = new Uint8Array(readFileSync(COMBINED));
  setRecord(bytes, 24, 200_000, 1, 0);
  refused(bytes, /truncated or damaged: the search tree (is deeper than 128 bits|reaches more nodes than it has)/);
  setRecord(bytes, 24, 1000, 1, 0);
  refused(bytes, /truncated or damaged: the search tree (is deeper than 128 bits|reaches more nodes than it has)/);
});

test("a record that shares a subtree: more nodes reached than there are", () => {
  const written = writeMmdb({ ipVersion: 4, recordSize: 32, networks: [{ network: "1.0.0.0/24", value: { country_code: "AU" } }] });
  const bytes = written.bytes.slice();
  setRecord(bytes, 32, 0, 1, 1); // 128.0.0.0/1, empty, now leads to the node of 0.0.0.0/1
  refused(bytes, /truncated or damaged: the search tree reaches more nodes than it has/);
});

test("a data pointer past the end of the data section", () => {
  const written = writeMmdb(small);
  const bytes = written.bytes.slice();
  setRecord(bytes, 24, written.nodeCount - 1, 0, written.nodeCount + 16 + 100_000);
  refused(bytes, /truncated or damaged: record \d+ points outside the data section/);
});

test("a data pointer into the data section separator", () => {
  const written = writeMmdb(small);
  const bytes = written.bytes.slice();
  setRecord(bytes, 24, written.nodeCount - 1, 0, written.nodeCount + 3);
  refused(bytes, /points outside the data section/);
});

test("data that cannot be decoded", () => {
  const written = writeMmdb(small);
  const bytes = written.bytes.slice();
  bytes.fill(0, written.searchTreeSize + 16, written.searchTreeSize + 18); // extended type 0+7: invalid
  refused(bytes, /truncated or damaged: the data at offset 0 cannot be decoded/);
});

test("data that runs past the data section", () => {
  const written = writeMmdb({ ipVersion: 4, networks: [{ network: "1.0.0.0/24", value: "a string" }] });
  const bytes = written.bytes.slice();
  bytes[written.searchTreeSize + 16] = 0x40 | 28; // a 28-byte string where there are 8
  refused(bytes, /truncated or damaged: the data at offset 0 runs past the data section/);
});

test("a tree deeper than 32 bits in an IPv4 file", () => {
  const written = writeMmdb({ ipVersion: 4, networks: [{ network: "1.2.3.4/32", value: { country_code: "AU" } }] });
  const bytes = written.bytes.slice();
  // the node at depth 31 gets a record to a node (itself would loop; the root is a node too)
  setRecord(bytes, 28, written.nodeCount - 1, 0, 1);
  refused(bytes, /truncated or damaged: the search tree (is deeper than 32 bits|reaches more nodes)/);
});

test("binary format major version 3", () => {
  refused(writeMmdb({ ...small, metadata: { binary_format_major_version: uint16(3) } }).bytes, /binary format major version 3 is not supported/);
});

test("an unsupported record size", () => {
  refused(writeMmdb({ ...small, metadata: { record_size: uint16(20) } }).bytes, /record size|Unsupported record size/);
});

test("metadata without node_count", () => {
  refused(writeMmdb({ ...small, metadata: { node_count: "many" } }).bytes, /truncated or damaged: the metadata has no node_count/);
});

test("ip_version 5", () => {
  refused(writeMmdb({ ...small, metadata: { ip_version: uint16(5) } }).bytes, /ip_version 5 is not 4 or 6/);
});

test("a node count larger than the file", () => {
  refused(writeMmdb({ ...small, metadata: { node_count: 1_000_000 } }).bytes, /truncated or damaged: the search tree .* runs past the metadata/);
});

test("a tree with no data", () => {
  refused(writeMmdb({ ipVersion: 4, networks: [] }).bytes, /the search tree has no data/);
  refused(writeMmdb({ ipVersion: 6, networks: [], aliases: ["::ffff:0:0/96"] }).bytes, /the search tree has no data/);
});

test("records of a layout iplookup does not map: nothing it reads would come out", () => {
  const anonymous = (databaseType: string) =>
    writeMmdb({
      ipVersion: 6,
      databaseType,
      networks: [
        { network: "1.0.0.0/24", value: { is_anonymous: true, is_tor_exit_node: true } },
        { network: "2600::/16", value: { is_anonymous_vpn: true } },
      ],
    }).bytes;
  refused(anonymous("GeoIP2-Anonymous-IP"), /^bad\.mmdb: its records \(database type "GeoIP2-Anonymous-IP"\) hold none of the keys iplookup reads: autonomous_system_number and autonomous_system_organization \(GeoLite2\/GeoIP2 ASN\);.* country_code, state1, city, postcode, latitude, longitude and timezone \(ip-location-db\); refused$/);
  refused(anonymous(""), /its records \(no database type given\) hold none of the keys iplookup reads/);
  // A record with a key iplookup reads, whatever its value, gives that field.
  expect(readMmdb(writeMmdb({ ipVersion: 4, networks: [{ network: "1.0.0.0/24", value: { country_code: "", is_anonymous: true } }] }).bytes, "ok.mmdb").fields).toEqual(["country_code"]);
});
