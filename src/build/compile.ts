/**
 * `bun run build`: compiles iplookup into one executable, dist/iplookup, with the
 * default data file embedded (build it first: `bun run data:default`).
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..", "..");
const data = join(root, "data", "iplookup-data.db");
if (!existsSync(data)) {
  console.error(`${data} is missing: run 'bun run data:default' first`);
  process.exit(1);
}
const outfile = process.argv[2] ?? join(root, "dist", "iplookup");
mkdirSync(join(outfile, ".."), { recursive: true });
const buildDate = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
const result = Bun.spawnSync(
  [
    process.execPath,
    "build",
    join(root, "src", "main-binary.ts"),
    // The worker threads' entry, compiled in beside the main one (new Worker finds it by
    // the same relative URL in the binary as in the source tree).
    join(root, "src", "serve", "worker-thread.ts"),
    "--compile",
    // No --minify: with it, Bun 1.4.4's compiled binary skipped the start-up line at
    // --log-level warn (the same bundle run by bun printed it).
    "--define",
    `IPLOOKUP_BUILD_DATE=${JSON.stringify(buildDate)}`,
    "--outfile",
    outfile,
  ],
  { stdout: "inherit", stderr: "inherit" },
);
if (result.exitCode !== 0) process.exit(result.exitCode ?? 1);
console.log(`${outfile}: ${(statSync(outfile).size / 1024 / 1024).toFixed(1)} MiB, built ${buildDate}`);
