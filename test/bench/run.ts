/**
 * `bun run bench`: iplookup's speed and memory, each figure beside a reference measured
 * in the same run. Writes test/bench/results/latest.md and latest.json and prints the
 * table. The HTTP part needs wrk (Debian: `apt-get install wrk`) and, for pinning the
 * server and the load to separate cores, taskset; it loads 127.0.0.1 only, for a
 * bounded time. Options: --quick (shorter runs), --skip-http, --skip-import.
 */
import { cpus, tmpdir } from "node:os";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { measureHttp, type Comparison, type HttpFigures } from "./http.ts";
import { measureImport, type ImportFigures } from "./import.ts";
import { measureInProcess } from "./in-process.ts";
import { measureStateStores, type StateStoreFigures } from "./state-stores.ts";
import { binaryPath, measureStartup, type StartupFigures } from "./startup.ts";
import { haveWrk } from "./wrk.ts";
import { measureWorkersMemory, type WorkersMemoryFigures } from "./workers-memory.ts";

const { values } = parseArgs({ options: { quick: { type: "boolean" }, "skip-http": { type: "boolean" }, "skip-import": { type: "boolean" } } });
const root = join(import.meta.dir, "..", "..");
const machine = `${cpus()[0]?.model ?? "unknown CPU"}, ${cpus().length} cores, Bun ${Bun.version}, ${process.platform}-${process.arch}`;

console.error("in-process lookups…");
const inProcess = measureInProcess();

let http: HttpFigures | null = null;
if (values["skip-http"]) console.error("HTTP: skipped (--skip-http)");
else if (!haveWrk()) console.error("HTTP: skipped, wrk is not installed (Debian: apt-get install wrk)");
else {
  console.error("HTTP: iplookup, the framework's floor and the contract's minimum (without and with an access log) against a bare Bun.serve, then SQLite state against an in-memory store…");
  // Many short paired runs rather than a few long ones: this machine's speed drifts by
  // ±15% from one second to the next, and the median of 15 paired ratios moves far less.
  http = await measureHttp(values.quick ? { rounds: 3, seconds: 1, connections: 32 } : { rounds: 15, seconds: 1, connections: 32 });
}

let stateStores: StateStoreFigures | null = null;
if (http) {
  console.error("HTTP: keys and units in PostgreSQL against a SQLite state file…");
  stateStores = await measureStateStores(values.quick ? { rounds: 3, seconds: 1, connections: 32 } : { rounds: 7, seconds: 1, connections: 32 });
  if (!stateStores) console.error("PostgreSQL: skipped, not reachable (IPLOOKUP_BENCH_POSTGRES, default 127.0.0.1:5432)");
}

console.error("start-up…");
const startup: StartupFigures[] = [await measureStartup("bun src/main.ts serve", [process.execPath, join(root, "src", "main.ts")])];
const binary = binaryPath();
if (binary) startup.push(await measureStartup("dist/iplookup serve", [binary]));
else console.error("start-up of the binary: skipped, run `bun run build` first");

let imports: ImportFigures[] = [];
let workersMemory: WorkersMemoryFigures | null = null;
if (values["skip-import"]) console.error("data import and the workers' memory on city data: skipped (--skip-import)");
else {
  console.error("data import…");
  const cityData = join(tmpdir(), `iplookup-bench-city-${process.pid}.db`);
  try {
    imports = measureImport(cityData);
    console.error("memory of serve --workers 2 against --workers 1 on the city data…");
    workersMemory = await measureWorkersMemory(cityData);
  } finally {
    rmSync(cityData, { force: true });
  }
}

const rows: string[][] = [];
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
/** A paired ratio as the table shows it: the median (and `unit`), then the range of the rounds. */
const ratioText = (figure: { ratio: number; ratioRange: [number, number] }, digits: number, unit = "") =>
  `${fmt(figure.ratio, digits)}${unit} (${fmt(figure.ratioRange[0], 2)}–${fmt(figure.ratioRange[1], 2)})`;
const verdict = (ok: boolean) => (ok ? "met" : "**not met**");
for (const figure of inProcess) {
  rows.push([
    `in-process lookup, IPv${figure.family} (text in, parse + lookup)`,
    `${fmt(figure.iplookupParseAndLookupNs)} ns (lookup alone ${fmt(figure.iplookupLookupNs)} ns)`,
    `mmdb-lib ${fmt(figure.mmdbLibNs)} ns`,
    ratioText(figure, 2, "×"),
    figure.family === 4 ? `≥ 5× faster than mmdb-lib: ${verdict(figure.ratio <= 0.2)}` : `≥ 3× faster than mmdb-lib: ${verdict(figure.ratio <= 1 / 3)}`,
  ]);
}
if (http) {
  for (const c of http.vsBare) {
    const perSecond = c.addressesPerRequest === 1 ? `${fmt(c.subject.requestsPerSecond)} req/s` : `${fmt(c.subject.requestsPerSecond * c.addressesPerRequest)} addresses/s`;
    const refPerSecond = c.addressesPerRequest === 1 ? `${fmt(c.reference.requestsPerSecond)} req/s` : `${fmt(c.reference.requestsPerSecond * c.addressesPerRequest)} addresses/s`;
    const target =
      c.addressesPerRequest === 1
        ? `≥ 0.70 of bare: ${verdict(c.ratio >= 0.7)}; p99 ≤ 2× bare's: ${verdict(c.subject.p99Ms <= 2 * c.reference.p99Ms)}`
        : c.addressesPerRequest === 100
          ? `≥ 0.40 of bare: ${verdict(c.ratio >= 0.4)}`
          : `≥ 0.50 of bare: ${verdict(c.ratio >= 0.5)}`;
    rows.push([
      `HTTP ${c.scenario}, serve at default settings (access log on), one worker (p50 ${fmt(c.subject.p50Ms, 2)} ms, p99 ${fmt(c.subject.p99Ms, 2)} ms)`,
      perSecond,
      `bare Bun.serve ${refPerSecond} (p50 ${fmt(c.reference.p50Ms, 2)} ms, p99 ${fmt(c.reference.p99Ms, 2)} ms)`,
      ratioText(c, 2),
      target,
    ]);
  }
  rows.push([
    "HTTP single lookup, access log on (to a file) against off (--log-level warn)",
    `${fmt(http.accessLog.subject.requestsPerSecond)} req/s`,
    `log off ${fmt(http.accessLog.reference.requestsPerSecond)} req/s`,
    ratioText(http.accessLog, 3),
    `costs ≤ 5%: ${verdict(http.accessLog.ratio >= 0.95)}`,
  ]);
  // Three more servers against the bare one, for single lookups: where the distance to bare comes from.
  const againstBare = (what: string, c: Comparison, note: string) => [
    what,
    `${fmt(c.subject.requestsPerSecond)} req/s`,
    `bare Bun.serve ${fmt(c.reference.requestsPerSecond)} req/s`,
    ratioText(c, 2),
    note,
  ];
  rows.push(
    againstBare(
      "HTTP single lookup, the framework's floor: a minimal Elysia app (an onRequest hook reading Authorization, the TypeBox body, a precomputed answer)",
      http.frameworkFloor,
      "— (what the stack leaves for iplookup's own work)",
    ),
    againstBare(
      "HTTP single lookup, the contract's minimum: one hand-written Bun.serve handler, no framework (key, rate limit, JSON body and schema, lookup, the unit committed to SQLite, X-Units-Consumed)",
      http.contractMinimum,
      "— (what the contract's work costs on Bun, whatever the HTTP layer)",
    ),
    againstBare(
      "HTTP single lookup, the contract's minimum with serve's access log: the same handler, and a request id, the peer's address and one access-log line a request, written to a file",
      http.contractMinimumLogged,
      "— (the ceiling for single lookups at default settings on this runtime)",
    ),
  );
  for (const c of http.accounting) {
    rows.push([
      `accounting, ${c.scenario}: SQLite state file`,
      `${fmt(c.subject.requestsPerSecond)} req/s`,
      `in-memory store ${fmt(c.reference.requestsPerSecond)} req/s`,
      ratioText(c, 3),
      `cost ≤ 5%: ${verdict(c.ratio >= 0.95)}`,
    ]);
  }
  if (stateStores) {
    const { groups, items } = stateStores.commits;
    for (const c of stateStores.comparisons) {
      const rate = (figures: Comparison["subject"]) =>
        c.addressesPerRequest === 1 ? `${fmt(figures.requestsPerSecond)} req/s` : `${fmt(figures.requestsPerSecond)} req/s (${fmt(figures.requestsPerSecond * c.addressesPerRequest)} addresses/s)`;
      rows.push([
        `state on PostgreSQL (same host, unpinned), ${c.scenario} (p50 ${fmt(c.subject.p50Ms, 2)} ms, p99 ${fmt(c.subject.p99Ms, 2)} ms)`,
        rate(c.subject),
        `SQLite state file ${rate(c.reference)}`,
        ratioText(c, 2),
        `— (${fmt(items / groups, 1)} charges a PostgreSQL commit over the run: ${fmt(items)} in ${fmt(groups)})`,
      ]);
    }
  }
  rows.push([`RSS after ${fmt(http.requestsServed)} requests`, `${fmt(http.rssAfterLoadMiB)} MiB`, "", "", `≤ 150 MB: ${verdict(http.rssAfterLoadMiB * 1.048576 <= 150)}`]);
}
for (const figure of startup) {
  const isBinary = figure.command.startsWith("dist/");
  rows.push([
    `start-up, ${figure.command}`,
    `first lookup after ${fmt(figure.firstLookupMs)} ms; RSS ${fmt(figure.rssAfterStartMiB)} MiB`,
    "",
    "",
    isBinary ? `≤ 300 ms: ${verdict(figure.firstLookupMs <= 300)}` : "",
  ]);
}
const [reference, ...withCity] = imports;
for (const figure of withCity) {
  rows.push([
    `data import, ${figure.name} (${fmt(figure.segments)} segments, ${fmt(figure.records)} records)`,
    `${fmt(figure.seconds, 1)} s, peak RSS ${fmt(figure.peakRssMiB)} MiB; file ${fmt(figure.fileMiB, 1)} MiB, loads in ${fmt(figure.loadMs)} ms`,
    reference ? `${reference.name}: ${fmt(reference.seconds, 1)} s, ${fmt(reference.peakRssMiB)} MiB; ${fmt(reference.fileMiB, 1)} MiB, ${fmt(reference.loadMs)} ms` : "",
    reference ? `${fmt(figure.seconds / reference.seconds, 1)}× the time, ${fmt(figure.loadMs / reference.loadMs, 1)}× the load` : "",
    `import < 60 s: ${verdict(figure.seconds < 60)}; load ≤ 1 s: ${verdict(figure.loadMs <= 1000)}`,
  ]);
}
if (workersMemory) {
  rows.push([
    "RSS of serve --workers 2 with the city data loaded, after 2,000 lookups",
    `${fmt(workersMemory.twoWorkersMiB)} MiB`,
    `--workers 1: ${fmt(workersMemory.oneWorkerMiB)} MiB`,
    `${fmt(workersMemory.ratio, 2)}×`,
    `≤ 1.25×: ${verdict(workersMemory.ratio <= 1.25)}`,
  ]);
}

const table = [
  `Measured ${new Date().toISOString().slice(0, 10)} on ${machine}; server and load generator pinned to separate cores.`,
  "",
  "| what | iplookup | reference (same run) | ratio: median of paired runs (range) | target |",
  "|---|---|---|---|---|",
  ...rows.map((row) => `| ${row.join(" | ")} |`),
].join("\n");
const results = join(import.meta.dir, "results");
mkdirSync(results, { recursive: true });
writeFileSync(join(results, "latest.md"), `${table}\n`);
writeFileSync(join(results, "latest.json"), JSON.stringify({ machine, date: new Date().toISOString(), inProcess, http, stateStores, startup, imports, workersMemory }, null, 2));
console.log(table);
