import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PURGE_DELAY_VARIABLE, SERVE_PURGE_DELAY } from "../../src/cli/allocator-setting.ts";
import { startServerProcess } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-allocator-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A running process's environment and command line, as the kernel holds them. */
function processOf(pid: number): { environment: string[]; command: string[] } {
  const read = (name: string) => readFileSync(`/proc/${pid}/${name}`, "utf8").split("\0").filter(Boolean);
  return { environment: read("environ"), command: read("cmdline") };
}

/** The test runner's environment without the allocator's variable, as an operator's shell has it. */
function environmentWithout(): Record<string, string> {
  const environment = { ...process.env } as Record<string, string>;
  delete environment[PURGE_DELAY_VARIABLE];
  return environment;
}

test("serve started without MIMALLOC_PURGE_DELAY runs itself again with it: the same process, arguments and answers", async () => {
  const server = await startServerProcess(["--state", join(dir, "unset.db"), "--admin-port", "off"], { env: environmentWithout() });
  try {
    const { environment, command } = processOf(server.process.pid);
    expect(environment).toContain(`${PURGE_DELAY_VARIABLE}=${SERVE_PURGE_DELAY}`);
    expect(command.slice(2)).toEqual(["serve", "--host", "127.0.0.1", "--port", "0", "--workers", "1", "--state", join(dir, "unset.db"), "--admin-port", "off"]);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect(await server.stop("SIGTERM")).toBe(0);
  } finally {
    await server.stop("SIGKILL");
  }
});

test("the runtime's own flags survive the re-exec when serve is run from source", async () => {
  const main = join(import.meta.dir, "..", "..", "src", "main.ts");
  const server = await startServerProcess(["--state", join(dir, "flags.db"), "--admin-port", "off"], {
    env: environmentWithout(),
    command: [process.execPath, "--smol", main],
  });
  try {
    const { environment, command } = processOf(server.process.pid);
    expect(environment).toContain(`${PURGE_DELAY_VARIABLE}=${SERVE_PURGE_DELAY}`);
    expect(command.slice(1, 4)).toEqual(["--smol", main, "serve"]);
  } finally {
    await server.stop("SIGKILL");
  }
});

test("the systemd unit sets the value serve would set itself", () => {
  const unit = readFileSync(join(import.meta.dir, "..", "..", "packaging", "iplookup.service"), "utf8");
  expect(unit).toContain(`\nEnvironment=${PURGE_DELAY_VARIABLE}=${SERVE_PURGE_DELAY}\n`);
});

test("an operator's own MIMALLOC_PURGE_DELAY is kept", async () => {
  const server = await startServerProcess(["--state", join(dir, "set.db"), "--admin-port", "off"], { env: { ...environmentWithout(), [PURGE_DELAY_VARIABLE]: "10" } });
  try {
    const { environment } = processOf(server.process.pid);
    expect(environment).toContain(`${PURGE_DELAY_VARIABLE}=10`);
    expect(environment).not.toContain(`${PURGE_DELAY_VARIABLE}=${SERVE_PURGE_DELAY}`);
  } finally {
    await server.stop("SIGKILL");
  }
});
