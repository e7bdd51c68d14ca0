import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Address } from "../../src/address/address.ts";
import { ipv4Text, ipv6Text } from "../../src/address/parse.ts";
import { buildDataSet } from "../../src/importer/build.ts";
import { writeDataFile } from "../../src/importer/data-file.ts";
import { defaultSources } from "../../src/importer/default-dataset.ts";
import { readHostingList } from "../../src/importer/hosting-asns.ts";
import type { SourceSpec } from "../../src/importer/source.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { LookupService } from "../../src/lookup/lookup-service.ts";
import { benchAddresses, seeded } from "./addresses.ts";
import { compare, scenarios, type Comparison } from "./http.ts";
import { roundsOf } from "./in-process.ts";
import type { BenchProcess } from "./processes.ts";
import { startServe } from "./serve-process.ts";
import { haveWrk } from "./wrk.ts";
import { pairedRatio } from "./paired.ts";

export interface SignalsLookupFigures {
  readonly scenario: string;
  /** Nanoseconds per address, best round: with the signals loaded, and without. */
  readonly withNs: number;
  readonly withoutNs: number;
  /** With over without: the median of the rounds' ratios, and their range. */
  readonly ratio: number;
  readonly ratioRange: [number, number];
}

export interface SignalsFileFigures {
  readonly fileMiB: number;
  /** Best of three loads, in this process. */
  readonly loadMs: number;
  readonly segments: number;
  readonly records: number;
}

export interface SignalsFigures {
  readonly feeds: string;
  readonly lookups: readonly SignalsLookupFigures[];
  /** `iplookup serve` on each file, one worker, single lookups and batches of 100 (null without wrk, or when not asked). */
  readonly http: readonly Comparison[] | null;
  readonly withSignals: SignalsFileFigures;
  readonly without: SignalsFileFigures;
}

/**
 * Lookups with privacy signals loaded against without, in the same run: the default ASN
 * and country data alone (every result's privacy all null), and the same data with the
 * hosting list and three feeds the size of the public ones (an AWS-style
 * ip-ranges.json, a Tor exit list, an Apple-style relay geofeed), their blocks drawn
 * from the ASN data's own ranges so that lookups land in them. Each lookup is what the
 * API does for it: the address looked up and its JSON answer written (LookupService's
 * lookupJson), one address a call (single) and 100 (batch). Also each data file's size
 * and load time.
 */
export async function measureSignals(options: { http?: { rounds: number; seconds: number; connections: number } } = {}): Promise<SignalsFigures> {
  const dir = mkdtempSync(join(tmpdir(), "iplookup-bench-signals-"));
  try {
    const feeds = writeFeeds(dir);
    const without = join(dir, "without.db");
    const withSignals = join(dir, "with.db");
    writeDataFile(without, await buildDataSet(defaultSources(), new Date()));
    Bun.gc(true);
    writeDataFile(withSignals, await buildDataSet([...feeds.sources, ...defaultSources()], new Date(), undefined, { hostingList: readHostingList() }));
    Bun.gc(true);
    const files = { withSignals: fileFigures(withSignals), without: fileFigures(without) };
    const indexes = [RangeIndex.open(withSignals), RangeIndex.open(without)] as const;
    const services = [new LookupService(() => indexes[0]), new LookupService(() => indexes[1])] as const;
    const texts = [...benchAddresses(4, 50_000, 11), ...benchAddresses(6, 50_000, 12)];
    const order = seeded(13);
    for (let i = texts.length - 1; i > 0; i--) {
      const j = order() % (i + 1);
      [texts[i], texts[j]] = [texts[j] as string, texts[i] as string];
    }
    const addresses = services[0].resolve(texts);
    const lookups: SignalsLookupFigures[] = [];
    for (const [scenario, size] of [["single lookup", 1], ["batch of 100", 100]] as const) {
      const pass = (service: LookupService) => () => {
        let bytes = 0;
        for (let i = 0; i < addresses.length; i += size) bytes += service.lookupJson(addresses.slice(i, i + size) as Address[], size > 1).body.byteLength;
        return bytes;
      };
      const [withTimes, withoutTimes] = roundsOf([pass(services[0]), pass(services[1])], addresses.length, 15) as [number[], number[]];
      lookups.push({ scenario, withNs: Math.min(...withTimes), withoutNs: Math.min(...withoutTimes), ...pairedRatio(withTimes, withoutTimes) });
    }
    const http = options.http && haveWrk() ? await measureHttpOn(dir, withSignals, without, options.http) : null;
    return { feeds: feeds.description, lookups, http, ...files };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `iplookup serve` at its default settings (one worker, access log on) on each data file,
 * single lookups and batches of 100, in alternation (see http.ts's compare).
 */
async function measureHttpOn(dir: string, withSignals: string, without: string, options: { rounds: number; seconds: number; connections: number }): Promise<Comparison[]> {
  const servers = [
    await startServe({ state: join(dir, "with.state.db"), logFile: join(dir, "with.log"), core: 0, data: withSignals }),
    await startServe({ state: join(dir, "without.state.db"), logFile: join(dir, "without.log"), core: 0, data: without }),
  ];
  try {
    const url = (server: BenchProcess) => `http://127.0.0.1:${server.info.port}/`;
    const [subject, reference] = servers.map((server) => ({ url: url(server), key: server.info.key as string })) as [{ url: string; key: string }, { url: string; key: string }];
    return compare(dir, scenarios().slice(0, 2), subject, reference, options);
  } finally {
    for (const server of servers) await server.stop();
  }
}

function fileFigures(path: string): SignalsFileFigures {
  let loadMs = Infinity;
  let index: RangeIndex | undefined;
  for (let i = 0; i < 3; i++) {
    const began = performance.now();
    index = RangeIndex.open(path);
    loadMs = Math.min(loadMs, performance.now() - began);
  }
  const info = (index as RangeIndex).info;
  return { fileMiB: statSync(path).size / 2 ** 20, loadMs, segments: info.segmentsV4 + info.segmentsV6, records: info.records };
}

/** Feeds the size of the public ones, in their formats, with blocks inside the ASN data's ranges. */
function writeFeeds(dir: string): { sources: SourceSpec[]; description: string } {
  const random = seeded(7);
  const [asn] = defaultSources();
  const starts = (family: 4 | 6) =>
    readFileSync(asn!.files.find((file) => file.family === family)!.path, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((row) => BigInt(row.slice(0, row.indexOf(","))));
  const v4 = starts(4);
  const v6 = starts(6);
  const pick = <T>(list: readonly T[]) => list[random() % list.length] as T;
  const text4 = (value: bigint) => ipv4Text(Number(value & 0xffffffffn));
  const text6 = (value: bigint) => ipv6Text([0, 1, 2, 3].map((w) => Number((value >> BigInt(96 - 32 * w)) & 0xffffffffn)));
  const block4 = (bits: number) => `${text4((pick(v4) >> BigInt(32 - bits)) << BigInt(32 - bits))}/${bits}`;
  const block6 = (bits: number) => `${text6((pick(v6) >> BigInt(128 - bits)) << BigInt(128 - bits))}/${bits}`;
  const regions = Array.from({ length: 30 }, (_, i) => `region-${i + 1}`);
  const aws = {
    syncToken: "1",
    createDate: "2026-11-24-22-13-08",
    prefixes: Array.from({ length: 9_000 }, () => ({ ip_prefix: block4(22 + (random() % 3)), region: pick(regions), service: pick(["AMAZON", "EC2", "S3"]), network_border_group: "x" })),
    ipv6_prefixes: Array.from({ length: 3_000 }, () => ({ ipv6_prefix: block6(44 + (random() % 5)), region: pick(regions), service: pick(["AMAZON", "EC2"]), network_border_group: "x" })),
  };
  writeFileSync(join(dir, "ip-ranges.json"), JSON.stringify(aws));
  const tor = [...Array.from({ length: 1_500 }, () => text4(pick(v4) + BigInt(random() % 256))), ...Array.from({ length: 500 }, () => text6(pick(v6) + BigInt(random() % 65536)))];
  writeFileSync(join(dir, "torbulkexitlist"), `${tor.join("\n")}\n`);
  const relay = [...Array.from({ length: 40_000 }, () => `${block4(31)},US,US-CA,,`), ...Array.from({ length: 20_000 }, () => `${block6(64)},US,US-CA,,`)];
  writeFileSync(join(dir, "egress-ip-ranges.csv"), `${relay.join("\n")}\n`);
  return {
    sources: [
      { files: [{ path: join(dir, "ip-ranges.json") }] },
      { files: [{ path: join(dir, "torbulkexitlist") }], feed: { signal: "tor" } },
      { files: [{ path: join(dir, "egress-ip-ranges.csv") }], feed: { signal: "relay", service: "iCloud Private Relay" } },
    ],
    description: "the hosting list, an ip-ranges.json of 12,000 blocks, a Tor list of 2,000 addresses and a relay geofeed of 60,000 blocks",
  };
}

if (import.meta.main) console.log(JSON.stringify(await measureSignals({ http: { rounds: 5, seconds: 1, connections: 32 } }), null, 2));
