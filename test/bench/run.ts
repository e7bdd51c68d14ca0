/**
 * `bun run bench`: iplookup's speed and memory, each figure beside a reference measured
 * in the same run. Writes test/bench/results/latest.md and latest.json and prints the
 * table. The HTTP part needs wrk (Debian: `apt-get install wrk`) and, for pinning the
 * server and the load to separate cores, taskset; it loads 127.0.0.1 only, for a
 * bounded time. Options: --quick (shorter runs), --skip-http, --skip-import, --skip-signals,
 * --skip-asn (the AS rows alone: `bun test/bench/asn.ts`), and --only key-controls (those
 * rows alone: what a key's controls cost single lookups, and the floor under that cost).
 */
import { cpus, tmpdir } from "node:os";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { measureHttp, type Comparison, type HttpFigures } from "./http.ts";
import { measureImport, type ImportFigures } from "./import.ts";
import { measureInProcess } from "./in-process.ts";
import { measureCorsFloor, measureKeyControls, type KeyControlsFigures } from "./key-controls.ts";
import { measureSignals, type SignalsFigures } from "./signals.ts";
import { measureStateStores, type StateStoreFigures } from "./state-stores.ts";
import { binaryPath, measureStartup, type StartupFigures } from "./startup.ts";
import { haveWrk } from "./wrk.ts";
import { measureWorkersMemory, type WorkersMemoryFigures } from "./workers-memory.ts";
import { asnRows, measureAsn, type AsnFigures } from "./asn.ts";

const { values } = parseArgs({ options: { quick: { type: "boolean" }, "skip-http": { type: "boolean" }, "skip-import": { type: "boolean" }, "skip-signals": { type: "boolean" }, "skip-asn": { type: "boolean" }, only: { type: "string" } } });
const root = join(import.meta.dir, "..", "..");
const machine = `${cpus()[0]?.model ?? "unknown CPU"}, ${cpus().length} cores, Bun ${Bun.version}, ${process.platform}-${process.arch}`;
const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { maximumFractionDigits: digits, minimumFractionDigits: digits });
/** A paired ratio as the table shows it: the median (and `unit`), then the range of the rounds. */
const ratioText = (figure: { ratio: number; ratioRange: [number, number] }, digits: number, unit = "") =>
  `${fmt(figure.ratio, digits)}${unit} (${fmt(figure.ratioRange[0], 2)}–${fmt(figure.ratioRange[1], 2)})`;
const verdict = (ok: boolean) => (ok ? "met" : "**not met**");
/** The server's CPU a request beside a rate, when the comparison measured it: subject (0) or reference (1). */
const cpuMicrosText = (c: Comparison, which: 0 | 1) => (c.cpu ? `; ${fmt(c.cpu.micros[which], 1)} µs${which === 0 ? " of CPU a request" : ""}` : "");
const cpuRatioText = (c: Comparison) => (c.cpu ? `; CPU a request ${ratioText(c.cpu, 3)}` : "");
/**
 * The row of the key controls' cost (CONTRACT §16): requests a second, and the server's
 * CPU a request, whose paired ratio the verdict reads (the rate of one core shared with
 * other work swings far more than the controls could move it).
 */
const keyControlsRow = (c: KeyControlsFigures, accessLog: boolean) => [
  `HTTP single lookup, a key with every control (expiry, 20 address blocks, 5 origins, CORS answered) against a plain key, one server, ${accessLog ? "access log on (serve's default)" : "access log off (the allowlist alone asks for the peer's address)"}`,
  `${fmt(c.subject.requestsPerSecond)} req/s${cpuMicrosText(c, 0)}`,
  `plain key ${fmt(c.reference.requestsPerSecond)} req/s${cpuMicrosText(c, 1)}`,
  `rate ${ratioText(c, 3)}${cpuRatioText(c)}`,
  `costs ≤ 3% (CPU a request): ${verdict(c.cpu.ratio >= 0.97)}`,
];
/** The floor under the controls' cost: what the CORS headers alone cost a bare Bun.serve. */
const corsFloorRow = (c: KeyControlsFigures) => [
  "HTTP single lookup, the floor under the key controls' cost: a bare Bun.serve answering a lookup's body and headers (prebuilt, as serve builds them) with the three CORS headers against without, no check on either",
  `${fmt(c.subject.requestsPerSecond)} req/s${cpuMicrosText(c, 0)}`,
  `without ${fmt(c.reference.requestsPerSecond)} req/s${cpuMicrosText(c, 1)}`,
  `rate ${ratioText(c, 3)}${cpuRatioText(c)}`,
  `— (${fmt(c.cpu.micros[0] - c.cpu.micros[1], 2)} µs a request for writing the headers)`,
];
const bounds = values.quick ? { rounds: 3, seconds: 1, connections: 32 } : { rounds: 15, seconds: 1, connections: 32 };

if (values.only !== undefined) {
  if (values.only !== "key-controls") throw new Error(`--only: "${values.only}" is not a row this bench runs alone (key-controls)`);
  if (!haveWrk()) throw new Error("wrk is not installed (Debian: apt-get install wrk)");
  console.error("HTTP: a key with every control against a plain key…");
  const rows = [
    keyControlsRow(await measureKeyControls({ ...bounds, accessLog: true }), true),
    keyControlsRow(await measureKeyControls({ ...bounds, accessLog: false }), false),
    corsFloorRow(await measureCorsFloor(bounds)),
  ];
  console.log(["| what | iplookup | reference (same run) | ratio: median of paired runs (range) | target |", "|---|---|---|---|---|", ...rows.map((row) => `| ${row.join(" | ")} |`)].join("\n"));
  process.exit(0);
}

console.error("in-process lookups…");
const inProcess = measureInProcess();

let signals: SignalsFigures | null = null;
if (values["skip-signals"]) console.error("lookups with privacy signals: skipped (--skip-signals)");
else {
  console.error("lookups with privacy signals loaded against without…");
  signals = await measureSignals(
    values["skip-http"] || !haveWrk() ? {} : { http: values.quick ? { rounds: 3, seconds: 1, connections: 32 } : { rounds: 7, seconds: 1, connections: 32 } },
  );
}

let http: HttpFigures | null = null;
if (values["skip-http"]) console.error("HTTP: skipped (--skip-http)");
else if (!haveWrk()) console.error("HTTP: skipped, wrk is not installed (Debian: apt-get install wrk)");
else {
  console.error("HTTP: iplookup, the framework's floor and the contract's minimum (without and with an access log) against a bare Bun.serve, then SQLite state against an in-memory store…");
  // Many short paired runs rather than a few long ones: this machine's speed drifts by
  // ±15% from one second to the next, and the median of 15 paired ratios moves far less.
  http = await measureHttp(bounds);
}
const keyControls = http
  ? { logged: await measureKeyControls({ ...bounds, accessLog: true }), quiet: await measureKeyControls({ ...bounds, accessLog: false }), corsFloor: await measureCorsFloor(bounds) }
  : null;

let stateStores: StateStoreFigures | null = null;
if (http) {
  console.error("HTTP: keys and units in PostgreSQL against a SQLite state file…");
  stateStores = await measureStateStores(values.quick ? { rounds: 3, seconds: 1, connections: 32 } : { rounds: 7, seconds: 1, connections: 32 });
  if (!stateStores) console.error("PostgreSQL: skipped, not reachable (IPLOOKUP_BENCH_POSTGRES, default 127.0.0.1:5432)");
}

let asn: AsnFigures | null = null;
if (values["skip-asn"] || values["skip-http"]) console.error("AS lookups: skipped");
else if (haveWrk()) {
  console.error("HTTP: AS lookups (a small AS, the AS with the most prefixes) against a bare Bun.serve, and the AS index's build time and memory…");
  asn = await measureAsn(values.quick ? { rounds: 3, seconds: 1, connections: 32 } : { rounds: 7, seconds: 1, connections: 32 });
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
for (const figure of inProcess) {
  rows.push([
    `in-process lookup, IPv${figure.family} (text in, parse + lookup)`,
    `${fmt(figure.iplookupParseAndLookupNs)} ns (lookup alone ${fmt(figure.iplookupLookupNs)} ns)`,
    `mmdb-lib ${fmt(figure.mmdbLibNs)} ns`,
    ratioText(figure, 2, "×"),
    figure.family === 4 ? `≥ 5× faster than mmdb-lib: ${verdict(figure.ratio <= 0.2)}` : `≥ 3× faster than mmdb-lib: ${verdict(figure.ratio <= 1 / 3)}`,
  ]);
}
if (signals) {
  for (const figure of signals.lookups) {
    rows.push([
      `in-process ${figure.scenario} with its JSON answer (LookupService.lookupJson), privacy signals loaded (${signals.feeds}) against none`,
      `${fmt(figure.withNs)} ns an address`,
      `no signal source ${fmt(figure.withoutNs)} ns`,
      ratioText(figure, 2, "×"),
      "— (what the signals cost a lookup)",
    ]);
  }
  for (const c of signals.http ?? []) {
    const rate = (figures: Comparison["subject"]) =>
      c.addressesPerRequest === 1 ? `${fmt(figures.requestsPerSecond)} req/s` : `${fmt(figures.requestsPerSecond * c.addressesPerRequest)} addresses/s`;
    rows.push([
      `HTTP ${c.scenario}, serve at default settings, one worker, on the data with those privacy signals (p50 ${fmt(c.subject.p50Ms, 2)} ms, p99 ${fmt(c.subject.p99Ms, 2)} ms)`,
      rate(c.subject),
      `no signal source ${rate(c.reference)} (p50 ${fmt(c.reference.p50Ms, 2)} ms, p99 ${fmt(c.reference.p99Ms, 2)} ms)`,
      ratioText(c, 2),
      "— (what the signals cost an answer)",
    ]);
  }
  const { withSignals: withFile, without: withoutFile } = signals;
  rows.push([
    "data file with those privacy signals: size and load (best of 3, in process)",
    `${fmt(withFile.fileMiB, 1)} MiB, loads in ${fmt(withFile.loadMs)} ms (${fmt(withFile.segments)} segments, ${fmt(withFile.records)} records)`,
    `no signal source: ${fmt(withoutFile.fileMiB, 1)} MiB, ${fmt(withoutFile.loadMs)} ms (${fmt(withoutFile.segments)} segments, ${fmt(withoutFile.records)} records)`,
    `${fmt(withFile.fileMiB / withoutFile.fileMiB, 2)}× the size, ${fmt(withFile.loadMs / withoutFile.loadMs, 2)}× the load`,
    "—",
  ]);
}
if (http) {
  for (const c of http.vsBare) {
    const perSecond = c.addressesPerRequest === 1 ? `${fmt(c.subject.requestsPerSecond)} req/s` : `${fmt(c.subject.requestsPerSecond * c.addressesPerRequest)} addresses/s`;
    const refPerSecond = c.addressesPerRequest === 1 ? `${fmt(c.reference.requestsPerSecond)} req/s` : `${fmt(c.reference.requestsPerSecond * c.addressesPerRequest)} addresses/s`;
    const target =
      c.addressesPerRequest === 1
        ? `≥ 0.62 of bare: ${verdict(c.ratio >= 0.62)}; p99 ≤ 2× bare's: ${verdict(c.subject.p99Ms <= 2 * c.reference.p99Ms)}`
        : c.addressesPerRequest === 100
          ? `≥ 0.30 of bare: ${verdict(c.ratio >= 0.3)}`
          : `≥ 0.33 of bare: ${verdict(c.ratio >= 0.33)}`;
    rows.push([
      `HTTP ${c.scenario}, serve at default settings (access log on), one worker (p50 ${fmt(c.subject.p50Ms, 2)} ms, p99 ${fmt(c.subject.p99Ms, 2)} ms)`,
      `${perSecond}${cpuMicrosText(c, 0)}`,
      `bare Bun.serve ${refPerSecond}${cpuMicrosText(c, 1)} (p50 ${fmt(c.reference.p50Ms, 2)} ms, p99 ${fmt(c.reference.p99Ms, 2)} ms)`,
      `${ratioText(c, 2)}${cpuRatioText(c)}`,
      target,
    ]);
  }
  rows.push([
    "HTTP single lookup, access log on (to a file) against off (--log-level warn)",
    `${fmt(http.accessLog.subject.requestsPerSecond)} req/s${cpuMicrosText(http.accessLog, 0)}`,
    `log off ${fmt(http.accessLog.reference.requestsPerSecond)} req/s${cpuMicrosText(http.accessLog, 1)}`,
    `${ratioText(http.accessLog, 3)}${cpuRatioText(http.accessLog)}`,
    `costs ≤ 8%: ${verdict(http.accessLog.ratio >= 0.92)}`,
  ]);
  if (keyControls) rows.push(keyControlsRow(keyControls.logged, true), keyControlsRow(keyControls.quiet, false), corsFloorRow(keyControls.corsFloor));
  // Three more servers against the bare one, for single lookups: where the distance to bare comes from.
  const againstBare = (what: string, c: Comparison, note: string) => [
    what,
    `${fmt(c.subject.requestsPerSecond)} req/s${cpuMicrosText(c, 0)}`,
    `bare Bun.serve ${fmt(c.reference.requestsPerSecond)} req/s${cpuMicrosText(c, 1)}`,
    `${ratioText(c, 2)}${cpuRatioText(c)}`,
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
      `${fmt(c.subject.requestsPerSecond)} req/s${cpuMicrosText(c, 0)}`,
      `in-memory store ${fmt(c.reference.requestsPerSecond)} req/s${cpuMicrosText(c, 1)}`,
      `${ratioText(c, 3)}${cpuRatioText(c)}`,
      `cost ≤ 5%: ${verdict(c.ratio >= 0.95)}`,
    ]);
  }
  if (stateStores) {
    const { groups, items, quick } = stateStores.commits;
    for (const c of stateStores.comparisons) {
      const rate = (figures: Comparison["subject"]) =>
        c.addressesPerRequest === 1 ? `${fmt(figures.requestsPerSecond)} req/s` : `${fmt(figures.requestsPerSecond)} req/s (${fmt(figures.requestsPerSecond * c.addressesPerRequest)} addresses/s)`;
      rows.push([
        `state on PostgreSQL (same host, unpinned), ${c.scenario} (p50 ${fmt(c.subject.p50Ms, 2)} ms, p99 ${fmt(c.subject.p99Ms, 2)} ms)`,
        rate(c.subject),
        `SQLite state file ${rate(c.reference)}`,
        ratioText(c, 2),
        `${c.addressesPerRequest === 1 ? `≥ 0.60 of SQLite: ${verdict(c.ratio >= 0.6)}` : "—"} (${fmt(items / groups, 1)} charges a group over the run: ${fmt(items)} in ${fmt(groups)}, ${fmt(quick)} of them in one statement)`,
      ]);
    }
  }
  rows.push([`RSS after ${fmt(http.requestsServed)} requests`, `${fmt(http.rssAfterLoadMiB)} MiB`, "", "", `≤ 150 MB: ${verdict(http.rssAfterLoadMiB * 1.048576 <= 150)}`]);
}
if (asn) rows.push(...asnRows(asn, fmt, ratioText));
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
writeFileSync(join(results, "latest.json"), JSON.stringify({ machine, date: new Date().toISOString(), inProcess, signals, http, keyControls, stateStores, asn, startup, imports, workersMemory }, null, 2));
console.log(table);
