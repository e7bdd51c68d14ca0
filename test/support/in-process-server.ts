import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startServerFor, type RunningServer } from "../../src/cli/commands/serve.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { readServeConfig } from "../../src/config/serve-config.ts";

/** A server on a real socket inside the test process, with its own state file. */
export interface SocketServer extends RunningServer {
  readonly statePath: string;
  readonly logs: string[];
  close(): Promise<void>;
}

export async function startSocketServer(flags: Record<string, string> = {}): Promise<SocketServer> {
  const dir = mkdtempSync(join(tmpdir(), "iplookup-socket-"));
  const statePath = join(dir, "state.db");
  const logs: string[] = [];
  // No admin listener unless asked: servers side by side would fight over its default port.
  const config = readServeConfig({ host: "127.0.0.1", port: "0", state: statePath, "log-level": "warn", "admin-port": "off", ...flags }, {});
  const server = await startServerFor(config, {
    env: {},
    io: { out: (line) => logs.push(line), err: (line) => logs.push(line) },
    now: () => new Date(),
    defaultDataPath: defaultDataPath(),
    selfCommand: [],
  });
  return {
    ...server,
    statePath,
    logs,
    async close() {
      await server.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
