import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { benchAddresses } from "./addresses.ts";
import { mainThreadCpuNs, startProcess, type BenchProcess } from "./processes.ts";
import { startServe } from "./serve-process.ts";
import { pinned, runWrk, wrkScript, type WrkFigures } from "./wrk.ts";
import { pairedRatio } from "./paired.ts";

export interface Scenario {
  readonly name: string;
  readonly path: string;
  readonly addresses: number;
  readonly body: string;
}

export interface Comparison {
  scenario: string;
  addressesPerRequest: number;
  subject: WrkFigures;
  reference: WrkFigures;
  /**
   * subject / reference, requests per second: the median of the ratios of paired runs
   * (each subject run beside the reference run right after it), which drift on a shared
   * machine moves less than a ratio of averages.
   */
  ratio: number;
  /** The paired ratios, lowest and highest. */
  ratioRange: [number, number];
  /**
   * The server's CPU a request (its main thread's, see mainThreadCpuNs), when both
   * endpoints named their process: the means of the rounds in microseconds (subject,
   * reference), and the reference's over the subject's, paired as `ratio` is (below 1:
   * the subject spends that much more). A core shared with other work moves it far less
   * than the rate.
   */
  cpu?: { micros: [number, number]; ratio: number; ratioRange: [number, number] };
}

/** A server to load: where, with which key, and its process (for its CPU a request). */
export interface Endpoint {
  readonly url: string;
  readonly key: string;
  readonly pid?: number;
}

export interface HttpFigures {
  /** `iplookup serve` at its default settings (access log on, to a file), one worker, against bare Bun.serve. */
  vsBare: Comparison[];
  /** Single lookups with the access log on (subject) against off (`--log-level warn`): what the log costs. */
  accessLog: Comparison;
  /** A minimal Elysia app (see framework-floor-server.ts) against the bare reference, single lookups. */
  frameworkFloor: Comparison;
  /**
   * One hand-written Bun.serve handler doing only the contract's work for a single lookup
   * (see contract-minimum-server.ts), units in a SQLite state file, against the bare reference.
   */
  contractMinimum: Comparison;
  /** The same handler with serve's access log around it (request id, peer, one line a request, to a file), against the bare reference. */
  contractMinimumLogged: Comparison;
  /** SQLite state file (subject) against an in-memory store (reference). */
  accounting: Comparison[];
  rssAfterLoadMiB: number;
  requestsServed: number;
}

const HERE = import.meta.dir;
const SERVER_CORE = 0;
const LOAD_CORE = 1;

export function scenarios(): Scenario[] {
  const v4 = benchAddresses(4, 800, 41);
  const v6 = benchAddresses(6, 200, 61);
  const mixed = v4.flatMap((address, i) => (i % 4 === 3 ? [address, v6[i >> 2]!] : [address]));
  return [
    { name: "single lookup", path: "/v1/lookup", addresses: 1, body: JSON.stringify({ ip: v4[0] }) },
    { name: "batch of 100", path: "/v1/lookup/batch", addresses: 100, body: JSON.stringify({ ips: mixed.slice(0, 100) }) },
    { name: "batch of 1,000", path: "/v1/lookup/batch", addresses: 1000, body: JSON.stringify({ ips: mixed.slice(0, 1000) }) },
  ];
}

function average(runs: WrkFigures[]): WrkFigures {
  const mean = (pick: (run: WrkFigures) => number) => runs.reduce((sum, run) => sum + pick(run), 0) / runs.length;
  return {
    requestsPerSecond: mean((run) => run.requestsPerSecond),
    p50Ms: mean((run) => run.p50Ms),
    p99Ms: mean((run) => run.p99Ms),
    requests: runs.reduce((sum, run) => sum + run.requests, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}

/**
 * Runs each scenario against two servers in alternation (subject, reference, subject,
 * reference, …), so drift on a shared machine falls on both alike.
 */
export function compare(work: string, list: Scenario[], subject: Endpoint, reference: Endpoint, options: { rounds: number; seconds: number; connections: number }): Comparison[] {
  return list.map((scenario) => {
    const [subjectRun, referenceRun] = [subject, reference].map((server, i): RunTarget => {
      const script = join(work, `${scenario.path.replaceAll("/", "_")}-${scenario.addresses}-${i}.lua`);
      writeFileSync(script, wrkScript(scenario.body, server.key));
      return { url: server.url + scenario.path.slice(1), script, pid: server.pid };
    });
    return pairedRuns(scenario, subjectRun!, referenceRun!, options);
  });
}

/** One side of paired runs: the URL loaded, the wrk script that loads it, and the server's process (for its CPU a request). */
export interface RunTarget {
  readonly url: string;
  readonly script: string;
  readonly pid?: number;
}

/**
 * Paired runs of one scenario: a short warm-up of each side, not counted, then `rounds`
 * rounds of a subject run and the reference run right after it; with both processes
 * known, each run's CPU a request too.
 */
export function pairedRuns(scenario: Scenario, subject: RunTarget, reference: RunTarget, options: { rounds: number; seconds: number; connections: number }): Comparison {
  const load = { seconds: options.seconds, connections: options.connections, core: LOAD_CORE };
  runWrk(subject.url, subject.script, { ...load, seconds: 1 });
  runWrk(reference.url, reference.script, { ...load, seconds: 1 });
  const withCpu = subject.pid !== undefined && reference.pid !== undefined;
  const runs: [WrkFigures[], WrkFigures[]] = [[], []];
  const cpu: [number[], number[]] = [[], []];
  const run = (target: RunTarget, side: 0 | 1) => {
    const before = withCpu ? mainThreadCpuNs(target.pid!) : 0;
    const figures = runWrk(target.url, target.script, load);
    if (withCpu) cpu[side].push((mainThreadCpuNs(target.pid!) - before) / figures.requests);
    runs[side].push(figures);
  };
  for (let round = 0; round < options.rounds; round++) {
    run(subject, 0);
    run(reference, 1);
  }
  const perSecond = (list: WrkFigures[]) => list.map((figures) => figures.requestsPerSecond);
  const comparison: Comparison = {
    scenario: scenario.name,
    addressesPerRequest: scenario.addresses,
    subject: average(runs[0]),
    reference: average(runs[1]),
    ...pairedRatio(perSecond(runs[0]), perSecond(runs[1])),
  };
  if (withCpu) comparison.cpu = cpuFigures(cpu[0], cpu[1]);
  return comparison;
}

/** CPU a request of paired runs, in nanoseconds each, as Comparison.cpu gives it. */
export function cpuFigures(subject: number[], reference: number[]): NonNullable<Comparison["cpu"]> {
  const meanMicros = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length / 1000;
  return { micros: [meanMicros(subject), meanMicros(reference)], ...pairedRatio(reference, subject) };
}

async function iplookupServer(state: string): Promise<BenchProcess> {
  return startProcess(pinned(SERVER_CORE, [process.execPath, join(HERE, "bench-server.ts"), "0", state]));
}

const urlOf = (server: BenchProcess) => `http://127.0.0.1:${server.info.port}/`;

export async function measureHttp(options: { rounds: number; seconds: number; connections: number }): Promise<HttpFigures> {
  const work = mkdtempSync(join(tmpdir(), "iplookup-bench-"));
  const started: BenchProcess[] = [];
  try {
    const list = scenarios();
    const real = await startServe({ state: join(work, "state.db"), logFile: join(work, "access.log"), core: SERVER_CORE });
    started.push(real);
    const realKey = String(real.info.key);
    // The bare server answers each path with a body of the size iplookup answers it with.
    const bodies: Record<string, string> = {};
    for (const scenario of list) {
      const response = await fetch(urlOf(real) + scenario.path.slice(1), {
        method: "POST",
        headers: { authorization: `Bearer ${realKey}`, "content-type": "application/json" },
        body: scenario.body,
      });
      if (response.status !== 200) throw new Error(`${scenario.name}: ${response.status} ${await response.text()}`);
      bodies[`${scenario.path}#${scenario.addresses}`] = await response.text();
    }
    const bodiesByPath: Record<string, string> = { "/v1/lookup": bodies["/v1/lookup#1"]! };
    // The bare server keys its body by path; batches of 100 and 1,000 run against separate instances.
    const bare: Record<number, BenchProcess> = {};
    const bareBodies: Record<number, string> = {};
    for (const scenario of list) {
      const file = (bareBodies[scenario.addresses] = join(work, `bare-${scenario.addresses}.json`));
      writeFileSync(file, JSON.stringify({ ...bodiesByPath, [scenario.path]: bodies[`${scenario.path}#${scenario.addresses}`] }));
      bare[scenario.addresses] = await startProcess(pinned(SERVER_CORE, [process.execPath, join(HERE, "bare-server.ts"), "0", file]));
      started.push(bare[scenario.addresses]!);
    }
    const vsBare = list.flatMap((scenario) =>
      compare(work, [scenario], { url: urlOf(real), key: realKey, pid: real.pid }, { url: urlOf(bare[scenario.addresses]!), key: "none", pid: bare[scenario.addresses]!.pid }, options),
    );
    // The framework's floor answers single lookups with the bare server's body for them.
    const single = list.find((scenario) => scenario.addresses === 1)!;
    const floor = await startProcess(pinned(SERVER_CORE, [process.execPath, join(HERE, "framework-floor-server.ts"), "0", bareBodies[1]!]));
    started.push(floor);
    const [frameworkFloor] = compare(work, [single], { url: urlOf(floor), key: realKey, pid: floor.pid }, { url: urlOf(bare[1]!), key: "none", pid: bare[1]!.pid }, options);
    await floor.stop();
    const minimum = await startProcess(pinned(SERVER_CORE, [process.execPath, join(HERE, "contract-minimum-server.ts"), "0", join(work, "minimum.db")]));
    started.push(minimum);
    const [contractMinimum] = compare(work, [single], { url: urlOf(minimum), key: String(minimum.info.key), pid: minimum.pid }, { url: urlOf(bare[1]!), key: "none", pid: bare[1]!.pid }, options);
    await minimum.stop();
    const logged = await startProcess(
      pinned(SERVER_CORE, [process.execPath, join(HERE, "contract-minimum-server.ts"), "0", join(work, "minimum-logged.db"), "access-log"]),
      {},
      join(work, "minimum-access.log"),
    );
    started.push(logged);
    const [contractMinimumLogged] = compare(work, [single], { url: urlOf(logged), key: String(logged.info.key), pid: logged.pid }, { url: urlOf(bare[1]!), key: "none", pid: bare[1]!.pid }, options);
    await logged.stop();
    for (const scenario of list) await bare[scenario.addresses]!.stop();

    const quiet = await startServe({ state: join(work, "quiet.db"), logFile: join(work, "quiet.log"), logLevel: "warn", core: SERVER_CORE });
    started.push(quiet);
    const [accessLog] = compare(work, [single], { url: urlOf(real), key: realKey, pid: real.pid }, { url: urlOf(quiet), key: String(quiet.info.key), pid: quiet.pid }, options);
    await quiet.stop();

    // Units committed to a file against memory: the app alone (bench-server.ts), both at warn.
    const file = await iplookupServer(join(work, "accounting.db"));
    started.push(file);
    const memory = await iplookupServer(":memory:");
    started.push(memory);
    const accounting = compare(work, list, { url: urlOf(file), key: String(file.info.key), pid: file.pid }, { url: urlOf(memory), key: String(memory.info.key), pid: memory.pid }, options);
    const requestsByReal = [...vsBare, accessLog!].reduce((sum, comparison) => sum + comparison.subject.requests, 0);
    return { vsBare, accessLog: accessLog!, frameworkFloor: frameworkFloor!, contractMinimum: contractMinimum!, contractMinimumLogged: contractMinimumLogged!, accounting, rssAfterLoadMiB: real.rssMiB(), requestsServed: requestsByReal };
  } finally {
    await Promise.all(started.map((process) => process.stop().catch(() => {})));
    rmSync(work, { recursive: true, force: true });
  }
}
