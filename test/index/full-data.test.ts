import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import type { Address } from "../../src/address/address.ts";
import { parseAddress } from "../../src/address/parse.ts";
import { defaultSources } from "../../src/importer/default-dataset.ts";
import type { IndexHit, RangeIndex } from "../../src/index/range-index.ts";
import { defaultIndex } from "../support/default-data.ts";
import { hostingBy } from "../support/privacy.ts";

/**
 * The whole default data set against the rule of CONTRACT §7 applied to the source CSVs
 * by an independent reference: for each file, the answer at x is the LAST row of the
 * file whose range contains x.
 */
interface Row {
  start: bigint;
  end: bigint;
  value: string;
}

class Reference {
  private readonly prefixMaxEnd: bigint[] = [];

  constructor(readonly rows: Row[]) {
    let max = -1n;
    for (let i = 0; i < rows.length; i++) {
      if (i > 0 && rows[i]!.start < rows[i - 1]!.start) throw new Error("the file is not sorted by start");
      if (rows[i]!.end > max) max = rows[i]!.end;
      this.prefixMaxEnd.push(max);
    }
  }

  /** The value of the last row containing x, or null. */
  at(x: bigint): string | null {
    let low = 0;
    let high = this.rows.length - 1;
    let last = -1;
    while (low <= high) {
      const mid = (low + high) >> 1;
      if (this.rows[mid]!.start <= x) {
        last = mid;
        low = mid + 1;
      } else high = mid - 1;
    }
    // Rows are in start order, so the latest row containing x is the first found going back.
    for (let i = last; i >= 0 && this.prefixMaxEnd[i]! >= x; i--) {
      if (this.rows[i]!.end >= x) return this.rows[i]!.value;
    }
    return null;
  }
}

function readCsv(path: string, withName: boolean): Row[] {
  const rows: Row[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line === "") continue;
    const first = line.indexOf(",");
    const second = line.indexOf(",", first + 1);
    let value = line.slice(second + 1);
    if (withName) {
      const third = value.indexOf(",");
      let name = value.slice(third + 1);
      if (name.startsWith('"')) name = name.slice(1, -1).replaceAll('""', '"');
      value = `${value.slice(0, third)}|${name}`;
    }
    rows.push({ start: BigInt(line.slice(0, first)), end: BigInt(line.slice(first + 1, second)), value });
  }
  return rows;
}

function toAddress(x: bigint, family: 4 | 6): Address {
  if (family === 4) return { version: 4, text: "", value: Number(x) };
  const words = [0, 1, 2, 3].map((w) => Number((x >> BigInt(96 - 32 * w)) & 0xffffffffn)) as [number, number, number, number];
  return { version: 6, text: "", words };
}

function cidrBounds(network: string, family: 4 | 6): [bigint, bigint, number] {
  const [text, prefixText] = network.split("/") as [string, string];
  const parsed = parseAddress(text)!;
  const value = parsed.version === 4 ? BigInt(parsed.value) : parsed.words.reduce((acc, w) => (acc << 32n) | BigInt(w), 0n);
  const host = BigInt((family === 4 ? 32 : 128) - Number(prefixText));
  return [value, value + (1n << host) - 1n, Number(prefixText)];
}

let index: RangeIndex;
let families = {} as Record<4 | 6, { asn: Reference; country: Reference; boundaries: bigint[] }>;

beforeAll(() => {
  index = defaultIndex();
  const [asnSource, countrySource] = defaultSources();
  for (const family of [4, 6] as const) {
    const fileOf = (source: typeof asnSource) => source!.files.find((file) => file.family === family)!.path;
    const asn = new Reference(readCsv(fileOf(asnSource), true));
    const country = new Reference(readCsv(fileOf(countrySource), false));
    const points = new Set<bigint>();
    for (const row of [...asn.rows, ...country.rows]) points.add(row.start).add(row.end + 1n);
    families[family] = { asn, country, boundaries: [...points].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)) };
  }
});

// The references hold millions of BigInts; this module stays loaded for the rest of the
// run, so they go here rather than when the run ends.
afterAll(() => {
  families = {} as typeof families;
  Bun.gc(true);
});

function expected(x: bigint, family: 4 | 6) {
  const { asn, country } = families[family];
  const a = asn.at(x);
  const c = country.at(x);
  return { found: a !== null || c !== null, asn: a === null ? null : `${a}`, country_code: c };
}

function actual(x: bigint, family: 4 | 6) {
  const hit = index.lookup(toAddress(x, family));
  return {
    found: hit !== null,
    asn: hit && hit.record.asn !== null ? `${hit.record.asn}|${hit.record.as_name ?? ""}` : null,
    country_code: hit?.record.country_code ?? null,
  };
}

/** True when the reference answers the same everywhere in [a, b]: it can change only at a boundary. */
function constant(a: bigint, b: bigint, family: 4 | 6): boolean {
  const { boundaries } = families[family];
  const first = JSON.stringify(expected(a, family));
  let low = 0;
  let high = boundaries.length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if (boundaries[mid]! <= a) low = mid + 1;
    else high = mid;
  }
  for (let i = low; i < boundaries.length && boundaries[i]! <= b; i++) {
    if (JSON.stringify(expected(boundaries[i]!, family)) !== first) return false;
  }
  return true;
}

function samples(family: 4 | 6): bigint[] {
  const { asn, country } = families[family];
  const max = family === 4 ? 0xffffffffn : (1n << 128n) - 1n;
  const out: bigint[] = [];
  for (const rows of [asn.rows, country.rows]) {
    for (let i = 0; i < rows.length; i += 100) {
      const row = rows[i]!;
      out.push(row.start, row.end);
      if (row.end < max) out.push(row.end + 1n);
      if (row.start > 0n) out.push(row.start - 1n);
    }
  }
  let seed = 12345n;
  for (let i = 0; i < 2000; i++) {
    seed = (seed * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n);
    // IPv6 random addresses are drawn from 2000::/4, where the data is.
    out.push(family === 4 ? seed >> 32n : (0x2n << 124n) | ((seed << 60n) ^ (seed * 0x9e3779b97f4a7c15n)) & ((1n << 124n) - 1n));
  }
  return out;
}

describe("the full default data set agrees with the rule applied to the CSVs", () => {
  for (const family of [4, 6] as const) {
    test(`IPv${family}: range starts, ends, one past the ends and random addresses`, () => {
      const all = samples(family);
      expect(all.length).toBeGreaterThan(family === 4 ? 30_000 : 12_000);
      let mismatches = 0;
      for (const x of all) {
        const want = expected(x, family);
        const got = actual(x, family);
        if (JSON.stringify(want) !== JSON.stringify(got)) {
          if (mismatches++ < 5) expect({ x: x.toString(), ...got }).toEqual({ x: x.toString(), ...want });
        }
      }
      expect(mismatches).toBe(0);
    });

    test(`IPv${family}: network is the largest block on which the answer is constant`, () => {
      const all = samples(family).filter((_, i) => i % 47 === 0);
      let checked = 0;
      for (const x of all) {
        const hit = index.lookup(toAddress(x, family));
        if (!hit) continue;
        const [start, end, prefix] = cidrBounds(hit.network, family);
        expect(start <= x && x <= end).toBe(true);
        expect(constant(start, end, family)).toBe(true);
        if (prefix > 0) {
          const parentSize = 1n << BigInt((family === 4 ? 32 : 128) - prefix + 1);
          const parentStart = (start / parentSize) * parentSize;
          expect(constant(parentStart, parentStart + parentSize - 1n, family)).toBe(false);
        }
        checked++;
      }
      expect(checked).toBeGreaterThan(200);
    });
  }

  test("known answers", () => {
    const look = (text: string) => asPlain(index.lookup(parseAddress(text)!));
    expect(look("1.1.1.1")).toEqual({ network: "1.1.1.0/24", record: { asn: 13335, as_name: "Cloudflare, Inc.", country_code: "AU", country: "Australia", privacy: hostingBy("Cloudflare") } });
    expect(look("8.8.8.8")?.record.asn).toBe(15169);
    expect(look("2606:4700:4700::1111")?.record.asn).toBe(13335);
  });
});

/** An index hit as a plain object (its record is parsed on demand). */
function asPlain(hit: IndexHit | null) {
  return hit && { network: hit.network, record: hit.record };
}
