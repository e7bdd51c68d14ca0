import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServerProcess } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-serve-hints-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("serve's hint to create a key quotes a state path a shell would split, so the command it suggests can be pasted", async () => {
  const state = join(dir, "my states", "it's.db");
  const server = await startServerProcess(["--state", state, "--admin-port", "off"]);
  try {
    const warning = server
      .stderr()
      .split("\n")
      .find((line) => line.includes("there are no API keys yet"));
    expect(JSON.parse(warning!).msg).toEndWith(` keys create --name NAME --state '${join(dir, "my states", "it")}'\\''s.db'`);
  } finally {
    expect(await server.stop()).toBe(0);
  }
});
