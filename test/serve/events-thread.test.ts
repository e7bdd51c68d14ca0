import { afterAll, expect, test } from "bun:test";
import { cli } from "../support/server-process.ts";
import { startSocketServer, type SocketServer } from "../support/in-process-server.ts";

/**
 * Webhook deliveries run on a thread of their own, not on a serving thread (CONTRACT §16:
 * deliveries never slow an answer): with the server started in this process, its main
 * thread (serving thread 0, the admin API, the logs) is held busy for a while, and a
 * delivery still reaches a receiver in another process meanwhile.
 */
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** A receiver in a process of its own (this one will be busy): prints its port, then the time of each request it takes. */
const RECEIVER = `
const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: async (request) => { await request.text(); console.log("received " + Date.now()); return new Response("ok"); } });
console.log("port " + server.port);
`;

test("a delivery goes out while the main thread is held busy", async () => {
  const receiver = Bun.spawn([process.execPath, "-e", RECEIVER], { stdout: "pipe", stderr: "inherit" });
  cleanups.push(() => receiver.kill());
  const lines: string[] = [];
  const reading = (async () => {
    const decoder = new TextDecoder();
    let rest = "";
    for await (const chunk of receiver.stdout) {
      rest += decoder.decode(chunk, { stream: true });
      const parts = rest.split("\n");
      rest = parts.pop() ?? "";
      lines.push(...parts);
    }
  })();
  const port = await waitFor(() => lines.find((line) => line.startsWith("port "))?.slice(5));

  const server: SocketServer = await startSocketServer({ workers: "1" });
  cleanups.push(() => server.close());
  const env = { IPLOOKUP_STATE: server.statePath };
  expect(cli(["webhooks", "add", `http://127.0.0.1:${port}/hook`, "--events", "key.created"], env).code).toBe(0);
  expect(cli(["keys", "create", "--name", "hooked"], env).code).toBe(0);

  // Longer than the deliverer's poll (1 s) with a wide margin for a busy machine.
  const busyFrom = Date.now();
  Bun.sleepSync(5000);
  const busyUntil = Date.now();

  const received = Number(await waitFor(() => lines.find((line) => line.startsWith("received "))?.slice(9)));
  expect(received).toBeGreaterThanOrEqual(busyFrom);
  expect(received).toBeLessThan(busyUntil);
  receiver.kill();
  await reading;
}, 40_000);

async function waitFor<T>(find: () => T | undefined, ms = 15_000): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (performance.now() > deadline) throw new Error("timed out");
    await Bun.sleep(20);
  }
}
