import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-set-plan-"));
const state = join(dir, "state.db");
let server: ServerProcess | undefined;
afterAll(async () => {
  await server?.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

test("keys set-plan reaches a running server within a second; the key's secret keeps working", async () => {
  const env = { IPLOOKUP_STATE: state };
  expect(cli(["plans", "set", "pair", "--max-batch", "2", "--monthly-units", "unlimited", "--rate-limit", "unlimited"], env).code).toBe(0);
  const { id, key } = JSON.parse(cli(["keys", "create", "--name", "mover", "--plan", "standard", "--json"], env).stdout) as Record<string, string>;
  server = await startServerProcess(["--state", state]);
  const batch = (ips: string[]) =>
    fetch(`${server!.url}/v1/lookup/batch`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ ips }),
    });
  const three = ["1.1.1.1", "8.8.8.8", "9.9.9.9"];
  expect((await batch(three)).status).toBe(200);

  expect(cli(["keys", "set-plan", id!, "pair"], env).code).toBe(0);
  const changed = performance.now();
  let status = 200;
  while (status === 200 && performance.now() - changed < 1000) {
    await Bun.sleep(20);
    status = (await batch(three)).status;
  }
  expect(status).toBe(413);
  expect(performance.now() - changed).toBeLessThan(1000);
  expect((await batch(three.slice(0, 2))).status).toBe(200);
  const usage = await fetch(`${server.url}/v1/usage`, { headers: { authorization: `Bearer ${key}` } });
  expect(((await usage.json()) as { plan: { name: string } }).plan.name).toBe("pair");
  expect(await server.stop("SIGTERM")).toBe(0);
  server = undefined;
}, 30_000);
