import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-cli-"));
const state = join(dir, "state.db");
let server: ServerProcess | undefined;
afterAll(async () => {
  await server?.stop("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

test("a key made with the CLI works against a running server, and revoking it stops it within a second", async () => {
  server = await startServerProcess(["--state", state]);
  // The hint names the command as it is run here, from a checkout.
  expect(server.stderr()).toContain("bun src/main.ts keys create --name NAME");

  const created = cli(["keys", "create", "--name", "acme", "--plan", "free", "--json"], { IPLOOKUP_STATE: state });
  expect(created.code).toBe(0);
  const { id, key, name, plan } = JSON.parse(created.stdout) as Record<string, string>;
  expect(name).toBe("acme");
  expect(plan).toBe("free");
  expect(key).toMatch(/^ipl_/);

  const lookup = () =>
    fetch(`${server!.url}/v1/lookup`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ ip: "1.1.1.1" }),
    });
  await Bun.sleep(600);
  const answered = await lookup();
  expect(answered.status).toBe(200);
  expect(((await answered.json()) as { asn: number }).asn).toBe(13335);

  const usage = cli(["usage", id!, "--json", "--state", state]);
  expect(usage.code).toBe(0);
  expect(JSON.parse(usage.stdout)).toMatchObject({ key: { id, name: "acme" }, units: { used: 1, limit: 100000, remaining: 99999 } });

  const listed = cli(["keys", "list", "--state", state]);
  expect(listed.stdout).toContain(id!);
  expect(listed.stdout).not.toContain(key!);

  expect(cli(["keys", "revoke", id!, "--state", state]).code).toBe(0);
  await Bun.sleep(1000);
  expect((await lookup()).status).toBe(401);

  expect(await server.stop("SIGTERM")).toBe(0);
  server = undefined;
});
