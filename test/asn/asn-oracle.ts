import { readFileSync } from "node:fs";
import { join } from "node:path";
import ipaddr from "ipaddr.js";
import { publicParts } from "../../src/address/classify.ts";

/**
 * An oracle for the AS answers, independent of the importer and of src/asn: it reads the
 * ip-location-db source CSVs itself, flattens each by CONTRACT §7's rule (where rows
 * overlap, the row that comes later in the file wins) with a sweep over the rows' edges,
 * and covers address sets with CIDR blocks by splitting from /0 down (a block wholly
 * inside the set is taken, a block partly inside is halved), which gives the fewest
 * blocks by another route than the importer's or the AS index's.
 */

const PACKAGES = join(import.meta.dir, "..", "..", "node_modules", "@ip-location-db");

/** A maximal run of addresses with one value, `first`…`last` inclusive. */
export interface Run {
  readonly first: bigint;
  readonly last: bigint;
  readonly value: string;
}

/** The rows of a `-num.csv` file as [first, last, third column]. */
function readRows(path: string): [bigint, bigint, string][] {
  const rows: [bigint, bigint, string][] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (line === "") continue;
    const a = line.indexOf(",");
    const b = line.indexOf(",", a + 1);
    let c = line.indexOf(",", b + 1);
    if (c < 0) c = line.length;
    rows.push([BigInt(line.slice(0, a)), BigInt(line.slice(a + 1, b)), line.slice(b + 1, c).replace(/\r$/, "")]);
  }
  return rows;
}

/** Flattens rows by "the later row wins", joining touching runs of one value. */
export function flatten(rows: readonly [bigint, bigint, string][]): Run[] {
  // Edges: a row starts covering at `first` and stops at `last + 1`.
  const edges: [bigint, number][] = [];
  rows.forEach(([first, last], i) => edges.push([first, i], [last + 1n, -i - 1]));
  edges.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const heap: number[] = [];
  const ended = new Uint8Array(rows.length);
  const runs: Run[] = [];
  for (let e = 0; e < edges.length; ) {
    const at = (edges[e] as [bigint, number])[0];
    for (; e < edges.length && (edges[e] as [bigint, number])[0] === at; e++) {
      const row = (edges[e] as [bigint, number])[1];
      if (row >= 0) push(heap, row);
      else ended[-row - 1] = 1;
    }
    while (heap.length > 0 && ended[heap[0] as number] === 1) pop(heap);
    if (heap.length === 0 || e === edges.length) continue;
    const next = (edges[e] as [bigint, number])[0];
    const value = (rows[heap[0] as number] as [bigint, bigint, string])[2];
    const previous = runs[runs.length - 1];
    if (previous && previous.last + 1n === at && previous.value === value) runs[runs.length - 1] = { first: previous.first, last: next - 1n, value };
    else runs.push({ first: at, last: next - 1n, value });
  }
  return runs;
}

/** A max-heap of row indices: the latest row covering an address is on top. */
function push(heap: number[], value: number): void {
  heap.push(value);
  let i = heap.length - 1;
  while (i > 0) {
    const parent = (i - 1) >> 1;
    if ((heap[parent] as number) >= value) break;
    heap[i] = heap[parent] as number;
    i = parent;
  }
  heap[i] = value;
}

function pop(heap: number[]): void {
  const last = heap.pop() as number;
  if (heap.length === 0) return;
  let i = 0;
  for (;;) {
    const left = 2 * i + 1;
    if (left >= heap.length) break;
    const child = left + 1 < heap.length && (heap[left + 1] as number) > (heap[left] as number) ? left + 1 : left;
    if ((heap[child] as number) <= last) break;
    heap[i] = heap[child] as number;
    i = child;
  }
  heap[i] = last;
}

/** The fewest CIDR blocks covering exactly the union of sorted disjoint runs, by halving from /0. */
export function cidrCover(runs: readonly { first: bigint; last: bigint }[], bits: 32 | 128): string[] {
  const blocks: string[] = [];
  const visit = (start: bigint, prefix: number, from: number, to: number) => {
    // Runs [from, to) are the ones that may meet this block.
    const end = start + (1n << BigInt(bits - prefix)) - 1n;
    while (from < to && (runs[from] as Run).last < start) from++;
    while (to > from && (runs[to - 1] as Run).first > end) to--;
    if (from === to) return;
    const run = runs[from] as Run;
    if (run.first <= start && run.last >= end) {
      blocks.push(`${text(start, bits)}/${prefix}`);
      return;
    }
    const half = 1n << BigInt(bits - prefix - 1);
    visit(start, prefix + 1, from, to);
    visit(start + half, prefix + 1, from, to);
  };
  visit(0n, 0, 0, runs.length);
  return blocks;
}

export function text(value: bigint, bits: 32 | 128): string {
  const bytes: number[] = [];
  for (let shift = bits - 8; shift >= 0; shift -= 8) bytes.push(Number((value >> BigInt(shift)) & 0xffn));
  const address = ipaddr.fromByteArray(bytes);
  return address.kind() === "ipv6" ? (address as ipaddr.IPv6).toRFC5952String() : address.toString();
}

/**
 * The runs of one family of the default data's AS and country sources, flattened; the AS
 * runs cut to their public parts (CONTRACT §2: a lookup of any other address is refused,
 * so it answers no AS), by the classifier's own list of public ranges.
 */
export interface Flattened {
  readonly asn: { readonly 4: Run[]; readonly 6: Run[] };
  readonly country: { readonly 4: Run[]; readonly 6: Run[] };
}

let cached: Flattened | undefined;

export function flattenedSources(): Flattened {
  const read = (pkg: string, file: string) => flatten(readRows(join(PACKAGES, pkg, file)));
  return (cached ??= {
    asn: { 4: publicRuns(read("asn", "asn-ipv4-num.csv"), 32), 6: publicRuns(read("asn", "asn-ipv6-num.csv"), 128) },
    country: { 4: read("geo-whois-asn-country", "geo-whois-asn-country-ipv4-num.csv"), 6: read("geo-whois-asn-country", "geo-whois-asn-country-ipv6-num.csv") },
  });
}

/** The runs of one AS, from the flattened AS source. */
export function runsOf(runs: readonly Run[], asn: number): Run[] {
  const wanted = String(asn);
  return runs.filter((run) => run.value === wanted);
}

/** The addresses of `runs` in each country of the flattened country source. */
function countryWeights(runs: readonly Run[], countries: readonly Run[]): Map<string, bigint> {
  const weights = new Map<string, bigint>();
  let c = 0;
  for (const run of runs) {
    while (c < countries.length && (countries[c] as Run).last < run.first) c++;
    for (let k = c; k < countries.length && (countries[k] as Run).first <= run.last; k++) {
      const country = countries[k] as Run;
      const first = country.first > run.first ? country.first : run.first;
      const last = country.last < run.last ? country.last : run.last;
      if (first <= last && country.value !== "") weights.set(country.value, (weights.get(country.value) ?? 0n) + last - first + 1n);
    }
  }
  return weights;
}

/**
 * The country of most IPv4 addresses of an AS (`v4`, `v6`: its runs) in the flattened
 * country sources; a tie goes to the one with more IPv6 addresses, then to the code that
 * sorts first; with no IPv4 address in a country, the country of most IPv6 addresses.
 * Null when no address has one.
 */
export function majorityCountry(v4: readonly Run[], v6: readonly Run[], countries: Flattened["country"]): string | null {
  const four = countryWeights(v4, countries[4]);
  const six = countryWeights(v6, countries[6]);
  const codes = [...new Set([...four.keys(), ...six.keys()])].sort();
  let best: string | null = null;
  for (const code of codes) {
    if (best === null) {
      best = code;
      continue;
    }
    const [a4, b4] = [four.get(code) ?? 0n, four.get(best) ?? 0n];
    const [a6, b6] = [six.get(code) ?? 0n, six.get(best) ?? 0n];
    if (a4 > b4 || (a4 === b4 && a6 > b6)) best = code;
  }
  return best;
}

/** Each run cut to its public parts, each part keeping the run's value. */
function publicRuns(runs: readonly Run[], bits: 32 | 128): Run[] {
  return runs.flatMap((run) => publicParts(bits, run.first, run.last).map(([first, last]) => ({ first, last, value: run.value })));
}
