/**
 * Bundles the console's script (console/console.ts with uPlot) for the browser. Called
 * as a Bun macro (`with { type: "macro" }`), so it runs when the importing module is
 * transpiled: once at `bun build --compile`, whose binary then carries the bundle as a
 * string, and at the first import when running from source. A macro cannot call
 * Bun.build (the bundler would wait on itself), so it runs `bun build` as a child
 * process, with the same Bun.
 */
export function bundleConsoleScript(): string {
  const entry = new URL("./console/console.ts", import.meta.url).pathname;
  const result = Bun.spawnSync([process.execPath, "build", entry, "--target=browser", "--format=iife", "--minify"], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, NO_COLOR: "1" },
  });
  if (result.exitCode !== 0) throw new Error(`bundling the console failed:\n${result.stderr.toString()}`);
  return result.stdout.toString();
}
