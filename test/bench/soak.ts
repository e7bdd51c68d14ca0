/**
 * `bun test/bench/soak.ts [--minutes 10] [--fraction 0.7]`: a soak of the real server.
 * Measures the peak of a mixed load (single lookups, batches of 10 and 100, usage
 * reads, some bad requests) with a closed loop, then runs the same mix at a fixed
 * fraction of that rate for the given time, reporting each 10-second window's rate,
 * errors, p99 latency and the server's RSS. Loopback only; it stops by itself.
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { benchAddresses } from "./addresses.ts";
import { startProcess } from "./processes.ts";
import { pinned } from "./wrk.ts";

const { values } = parseArgs({ options: { minutes: { type: "string" }, fraction: { type: "string" } } });
const minutes = Number(values.minutes ?? 10);
const fraction = Number(values.fraction ?? 0.7);
// The server gets core 0; this load generator takes core 1, as in the main bench.
Bun.spawnSync(["taskset", "-p", "-c", "1", String(process.pid)], { stdout: "ignore", stderr: "ignore" });
const server = await startProcess(pinned(0, [process.execPath, join(import.meta.dir, "bench-server.ts"), "0", ":memory:"]));
const url = `http://127.0.0.1:${server.info.port}`;
const key = String(server.info.key);
const v4 = benchAddresses(4, 2000, 3);

type Kind = "single" | "batch10" | "batch100" | "usage" | "bad";
const MIX: Kind[] = ["single", "single", "single", "single", "single", "batch10", "batch10", "batch100", "usage", "bad"];

function send(kind: Kind, i: number): Promise<Response> {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  switch (kind) {
    case "single":
      return fetch(`${url}/v1/lookup`, { method: "POST", headers, body: JSON.stringify({ ip: v4[i % v4.length] }) });
    case "batch10":
    case "batch100": {
      const n = kind === "batch10" ? 10 : 100;
      const start = (i * 7) % (v4.length - n);
      return fetch(`${url}/v1/lookup/batch`, { method: "POST", headers, body: JSON.stringify({ ips: v4.slice(start, start + n) }) });
    }
    case "usage":
      return fetch(`${url}/v1/usage`, { headers });
    case "bad":
      return fetch(`${url}/v1/lookup`, { method: "POST", headers, body: '{"ip":"10.0.0.1"}' });
  }
}

/** Bad requests are meant to be refused with 400; anything else not 200 is an error. */
function isError(kind: Kind, status: number): boolean {
  return kind === "bad" ? status !== 400 : status !== 200;
}

async function peak(seconds: number): Promise<number> {
  let done = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: 64 }, async (_, worker) => {
      for (let i = worker; performance.now() < until; i += 64) {
        const response = await send(MIX[i % MIX.length]!, i);
        await response.arrayBuffer();
        done++;
      }
    }),
  );
  return done / seconds;
}

interface Window {
  second: number;
  rate: number;
  errors: number;
  p99Ms: number;
  rssMiB: number;
}

async function soak(rate: number, totalSeconds: number): Promise<Window[]> {
  const windows: Window[] = [];
  const began = performance.now();
  let latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  let inFlight = 0;
  let windowStart = began;
  const pending = new Set<Promise<void>>();
  while (performance.now() - began < totalSeconds * 1000) {
    const due = Math.floor(((performance.now() - began) / 1000) * rate);
    while (sent < due && inFlight < 512) {
      const i = sent++;
      const kind = MIX[i % MIX.length]!;
      const t0 = performance.now();
      inFlight++;
      const request = send(kind, i)
        .then(async (response) => {
          await response.arrayBuffer();
          if (isError(kind, response.status)) errors++;
        })
        .catch(() => {
          errors++;
        })
        .finally(() => {
          inFlight--;
          latencies.push(performance.now() - t0);
          pending.delete(request);
        });
      pending.add(request);
    }
    if (performance.now() - windowStart >= 10_000) {
      latencies.sort((a, b) => a - b);
      windows.push({
        second: Math.round((performance.now() - began) / 1000),
        rate: latencies.length / ((performance.now() - windowStart) / 1000),
        errors,
        p99Ms: latencies[Math.floor(latencies.length * 0.99)] ?? Number.NaN,
        rssMiB: server.rssMiB(),
      });
      console.error(JSON.stringify(windows.at(-1)));
      latencies = [];
      errors = 0;
      windowStart = performance.now();
    }
    await Bun.sleep(1);
  }
  await Promise.all(pending);
  return windows;
}

try {
  const peakRate = await peak(5);
  const target = Math.round(peakRate * fraction);
  console.error(`peak ${Math.round(peakRate)} requests/s with this mix; soaking at ${target}/s for ${minutes} min`);
  const windows = await soak(target, minutes * 60);
  const lines = [
    `Soak: ${minutes} min at ${target} requests/s (${fraction} of the measured peak ${Math.round(peakRate)}/s), mixed load.`,
    "",
    "| second | requests/s | errors | p99 ms | server RSS MiB |",
    "|---|---|---|---|---|",
    ...windows.map((w) => `| ${w.second} | ${Math.round(w.rate)} | ${w.errors} | ${w.p99Ms.toFixed(2)} | ${w.rssMiB.toFixed(0)} |`),
  ];
  console.log(lines.join("\n"));
} finally {
  await server.stop();
}
