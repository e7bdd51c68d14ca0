/**
 * `bun run build`: compiles iplookup into one executable, dist/iplookup, with the
 * default data file embedded (build it first: `bun run data:default`).
 *
 *   bun src/build/compile.ts [OUTFILE] [--target bun-linux-x64|bun-linux-arm64]
 *
 * A target other than this machine's takes Bun's runtime for it from the npm registry
 * (Bun fetches and caches it). SOURCE_DATE_EPOCH, when set, is the build date the binary
 * reports, so that two builds of one commit can be the same bytes (release.ts sets it
 * to the commit's time).
 */
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";

const root = join(import.meta.dir, "..", "..");

/** The build date: SOURCE_DATE_EPOCH (seconds) if set, else now; RFC 3339 to the second. */
export function buildDate(env: Readonly<Record<string, string | undefined>>): string {
  const epoch = env.SOURCE_DATE_EPOCH;
  const date = epoch && /^[0-9]+$/.test(epoch) ? new Date(Number(epoch) * 1000) : new Date();
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Compiles the binary for `target` (null: this machine) to `outfile`; throws on failure. */
export function compile(outfile: string, target: string | null, env = process.env): { date: string; bytes: number } {
  const data = join(root, "data", "iplookup-data.db");
  if (!existsSync(data)) throw new Error(`${data} is missing: run 'bun run data:default' first`);
  mkdirSync(join(outfile, ".."), { recursive: true });
  const date = buildDate(env);
  const result = Bun.spawnSync(
    [
      process.execPath,
      "build",
      join(root, "src", "main-binary.ts"),
      // The worker threads' entry, compiled in beside the main one (new Worker finds it by
      // the same relative URL in the binary as in the source tree).
      join(root, "src", "serve", "worker-thread.ts"),
      "--compile",
      ...(target ? [`--target=${target}`] : []),
      // No --minify: with it, Bun 1.4.4's compiled binary skipped the start-up line at
      // --log-level warn (the same bundle run by bun printed it).
      "--define",
      `IPLOOKUP_BUILD_DATE=${JSON.stringify(date)}`,
      "--outfile",
      outfile,
    ],
    { stdout: "inherit", stderr: "inherit", cwd: root },
  );
  if (result.exitCode !== 0) throw new Error(`bun build --compile${target ? ` --target=${target}` : ""} failed (exit ${result.exitCode})`);
  return { date, bytes: statSync(outfile).size };
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({ args: process.argv.slice(2), options: { target: { type: "string" } }, allowPositionals: true });
  const outfile = positionals[0] ?? join(root, "dist", "iplookup");
  try {
    const { date, bytes } = compile(outfile, values.target ?? null);
    console.log(`${outfile}: ${(bytes / 1024 / 1024).toFixed(1)} MiB, built ${date}`);
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
}
