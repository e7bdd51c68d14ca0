/**
 * The AS rows of `bun run bench` (CONTRACT §14): GET /v1/asn/{asn} per second over HTTP
 * for a small AS and for the AS with the most prefixes of the default data, each against
 * a bare Bun.serve answering a body of the same size; and the AS index's build time and
 * memory, beside the RSS of the server it lives in.
 *
 * Runs alone as `bun test/bench/asn.ts [--quick]` (prints its rows), and inside run.ts.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildAsnImage } from "../../src/asn/asn-image.ts";
import { asnIndexOf } from "../../src/asn/asn-index.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { pairedRatio } from "./paired.ts";
import { rssMiB, startProcess, type BenchProcess } from "./processes.ts";
import { startServe } from "./serve-process.ts";
import { pinned, runWrk, type WrkFigures } from "./wrk.ts";

export interface AsnHttpFigure {
  readonly asn: number;
  readonly prefixes: number;
  readonly bodyBytes: number;
  readonly subject: WrkFigures;
  readonly reference: WrkFigures;
  readonly ratio: number;
  readonly ratioRange: [number, number];
}

export interface AsnFigures {
  readonly http: AsnHttpFigure[];
  /** Building the AS index of the default data: the median of a few builds, in this process. */
  readonly buildMs: number;
  /** The AS index's typed arrays (shared by every thread of a server). */
  readonly imageMiB: number;
  /** What building it added to this process's RSS, after collecting garbage. */
  readonly rssGrowthMiB: number;
  /** `serve` (one worker) after the HTTP rows' requests, the AS index included. */
  readonly serveRssMiB: number;
}

/** A small AS (two prefixes a family) and the AS with the most prefixes (4134, Chinanet: 9,912). */
export const BENCH_ASES = [112, 4134] as const;

const HERE = import.meta.dir;
const SERVER_CORE = 0;
const LOAD_CORE = 1;

/**
 * The AS index's cost in this process: build time (median of `builds`) and memory: RSS
 * after building it against before, each read a second after collecting garbage (the
 * allocator gives freed pages back to the system over some hundred milliseconds).
 */
export async function measureAsnIndex(builds = 3): Promise<Pick<AsnFigures, "buildMs" | "imageMiB" | "rssGrowthMiB">> {
  const settledRss = async () => {
    Bun.gc(true);
    await Bun.sleep(1000);
    Bun.gc(true);
    return rssMiB(process.pid);
  };
  const index = RangeIndex.open(defaultDataPath());
  const before = await settledRss();
  const kept = asnIndexOf(index);
  const rssGrowthMiB = (await settledRss()) - before;
  const times: number[] = [];
  for (let i = 0; i < builds; i++) {
    const began = performance.now();
    buildAsnImage(index.image);
    times.push(performance.now() - began);
  }
  times.sort((a, b) => a - b);
  let bytes = 0;
  for (const array of Object.values(kept.image)) if (array !== null) bytes += (array as Uint8Array).byteLength;
  return { buildMs: times[times.length >> 1] as number, imageMiB: bytes / 2 ** 20, rssGrowthMiB };
}

function getScript(key: string): string {
  return ['wrk.method = "GET"', `wrk.headers["Authorization"] = "Bearer ${key}"`].join("\n");
}

export async function measureAsn(options: { rounds: number; seconds: number; connections: number }): Promise<AsnFigures> {
  const index = await measureAsnIndex();
  const work = mkdtempSync(join(tmpdir(), "iplookup-bench-asn-"));
  const started: BenchProcess[] = [];
  try {
    const real = await startServe({ state: join(work, "state.db"), logFile: join(work, "access.log"), core: SERVER_CORE });
    started.push(real);
    const key = String(real.info.key);
    const url = `http://127.0.0.1:${real.info.port}/`;
    const bodies: Record<string, string> = {};
    for (const asn of BENCH_ASES) {
      const response = await fetch(`${url}v1/asn/${asn}`, { headers: { authorization: `Bearer ${key}` } });
      if (response.status !== 200) throw new Error(`AS${asn}: ${response.status} ${await response.text()}`);
      bodies[`/v1/asn/${asn}`] = await response.text();
    }
    const bodiesFile = join(work, "bare.json");
    writeFileSync(bodiesFile, JSON.stringify(bodies));
    const bare = await startProcess(pinned(SERVER_CORE, [process.execPath, join(HERE, "asn-bare-server.ts"), "0", bodiesFile]));
    started.push(bare);
    const bareUrl = `http://127.0.0.1:${bare.info.port}/`;
    const scripts = [getScript(key), getScript("none")].map((text, i) => {
      const path = join(work, `get-${i}.lua`);
      writeFileSync(path, text);
      return path;
    });
    const load = { seconds: options.seconds, connections: options.connections, core: LOAD_CORE };
    const http: AsnHttpFigure[] = [];
    for (const asn of BENCH_ASES) {
      const path = `v1/asn/${asn}`;
      runWrk(url + path, scripts[0]!, { ...load, seconds: 1 });
      runWrk(bareUrl + path, scripts[1]!, { ...load, seconds: 1 });
      const subjectRuns: WrkFigures[] = [];
      const referenceRuns: WrkFigures[] = [];
      for (let round = 0; round < options.rounds; round++) {
        subjectRuns.push(runWrk(url + path, scripts[0]!, load));
        referenceRuns.push(runWrk(bareUrl + path, scripts[1]!, load));
      }
      const body = bodies[`/${path}`]!;
      const parsed = JSON.parse(body) as { prefixes: string[]; prefixes6: string[] };
      const perSecond = (runs: WrkFigures[]) => runs.map((run) => run.requestsPerSecond);
      const errors = subjectRuns.reduce((sum, run) => sum + run.errors, 0);
      if (errors > 0) throw new Error(`AS${asn}: ${errors} answers were not 200`);
      http.push({
        asn,
        prefixes: parsed.prefixes.length + parsed.prefixes6.length,
        bodyBytes: Buffer.byteLength(body),
        subject: mean(subjectRuns),
        reference: mean(referenceRuns),
        ...pairedRatio(perSecond(subjectRuns), perSecond(referenceRuns)),
      });
    }
    return { http, ...index, serveRssMiB: real.rssMiB() };
  } finally {
    await Promise.all(started.map((process) => process.stop().catch(() => {})));
    rmSync(work, { recursive: true, force: true });
  }
}

function mean(runs: WrkFigures[]): WrkFigures {
  const average = (pick: (run: WrkFigures) => number) => runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;
  return {
    requestsPerSecond: average((run) => run.requestsPerSecond),
    p50Ms: average((run) => run.p50Ms),
    p99Ms: average((run) => run.p99Ms),
    requests: runs.reduce((sum, run) => sum + run.requests, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}

/** The table rows, in run.ts's columns. */
export function asnRows(figures: AsnFigures, fmt: (n: number, digits?: number) => string, ratioText: (figure: { ratio: number; ratioRange: [number, number] }, digits: number) => string): string[][] {
  const rows = figures.http.map((figure) => [
    `HTTP GET /v1/asn/${figure.asn} (${fmt(figure.prefixes)} prefixes, ${fmt(figure.bodyBytes / 1024, 1)} KiB), serve at default settings, one worker (p50 ${fmt(figure.subject.p50Ms, 2)} ms, p99 ${fmt(figure.subject.p99Ms, 2)} ms)`,
    `${fmt(figure.subject.requestsPerSecond)} req/s`,
    `bare Bun.serve, same body: ${fmt(figure.reference.requestsPerSecond)} req/s (p50 ${fmt(figure.reference.p50Ms, 2)} ms, p99 ${fmt(figure.reference.p99Ms, 2)} ms)`,
    ratioText(figure, 2),
    "—",
  ]);
  const share = figures.rssGrowthMiB / (figures.serveRssMiB - figures.rssGrowthMiB);
  rows.push([
    "AS index of the default data: build time (median of 3) and memory (its shared typed arrays; RSS it adds)",
    `${fmt(figures.buildMs)} ms; ${fmt(figures.imageMiB, 1)} MiB, RSS +${fmt(figures.rssGrowthMiB, 1)} MiB`,
    `serve's RSS, one worker, after the rows above: ${fmt(figures.serveRssMiB)} MiB`,
    `+${fmt(share * 100, 1)}%`,
    `≤ 15% more memory: ${share <= 0.15 ? "met" : "**not met**"}`,
  ]);
  return rows;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { quick: { type: "boolean" } } });
  const figures = await measureAsn(values.quick ? { rounds: 3, seconds: 1, connections: 32 } : { rounds: 7, seconds: 1, connections: 32 });
  const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const ratioText = (figure: { ratio: number; ratioRange: [number, number] }, digits: number) => `${fmt(figure.ratio, digits)} (${fmt(figure.ratioRange[0], 2)}–${fmt(figure.ratioRange[1], 2)})`;
  for (const row of asnRows(figures, fmt, ratioText)) console.log(`| ${row.join(" | ")} |`);
}
