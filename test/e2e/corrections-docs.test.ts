/**
 * docs/corrections.md's commands, run as the operator would run them: its command-line
 * block as a bash script against a state file, its curl block against a real server's
 * admin listener.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli, startServerProcess } from "../support/server-process.ts";

const ROOT = join(import.meta.dir, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "iplookup-corrections-docs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const guide = readFileSync(join(ROOT, "docs", "corrections.md"), "utf8");
const blocks = [...guide.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1] as string);
/** The lookup block and the output the page shows after it. */
const shownLookup = /```sh\n(iplookup lookup [^\n]*)\n```\n\n```text output\n([\s\S]*?)```/.exec(guide);
/** `iplookup` as the checkout runs it. */
const PRELUDE = `set -euo pipefail\niplookup() { "${process.execPath}" src/main.ts "$@"; }\n`;

function bash(script: string, env: Record<string, string>) {
  const result = Bun.spawnSync(["bash", "-c", PRELUDE + script], { cwd: ROOT, env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

test("the command-line block runs, and leaves the corrections it says", () => {
  const script = blocks.find((block) => block.includes("iplookup corrections set"));
  expect(script).toBeDefined();
  const state = join(dir, "cli.db");
  const result = bash(script!, { IPLOOKUP_STATE: state });
  expect(result).toMatchObject({ code: 0, stderr: "" });
  const left = JSON.parse(cli(["corrections", "list", "--json"], { IPLOOKUP_STATE: state }).stdout) as { cidr: string }[];
  expect(left.map((c) => c.cidr)).toEqual(["8.8.8.0/24", "9.9.9.0/24", "2a02:26f7:b3c0:4000::/64"]);
  expect(left[1]).toMatchObject({ city: null });
  // Public blocks the default data answers, so the corrections show: the page's lookups
  // print what it shows after them.
  expect(shownLookup).not.toBeNull();
  const [, lookup, output] = shownLookup!;
  expect(bash(lookup!, { IPLOOKUP_STATE: state })).toEqual({ code: 0, stdout: output!, stderr: "" });
});

test("the admin API block runs against a server's admin listener", async () => {
  const script = blocks.find((block) => block.includes("curl"));
  expect(script).toBeDefined();
  const state = join(dir, "api.db");
  const token = (JSON.parse(cli(["admin", "create", "--name", "docs", "--json"], { IPLOOKUP_STATE: state }).stdout) as { token: string }).token;
  const server = await startServerProcess(["--state", state, "--admin-port", "0", "--log-level", "warn"]);
  try {
    const admin = /"admin":"([^"]+)"/.exec(server.stderr())![1]!.replace(/\/$/, "");
    const adapted = script!.replace(/^TOKEN=.*$/m, `TOKEN=${token}`).replaceAll("localhost:8081", new URL(admin).host).replaceAll("curl -s", "curl -sf -w '\\n'");
    const result = bash(adapted, {});
    expect(result.code).toBe(0);
    const [put, list, removed] = result.stdout.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(put).toMatchObject({ cidr: "8.8.8.0/24", country_code: "FR", asn: 3215, privacy: { hosting: false }, note: "ticket 12" });
    expect(list).toEqual({ corrections: [put] });
    expect(removed).toEqual(put);
  } finally {
    await server.stop("SIGKILL");
  }
});
