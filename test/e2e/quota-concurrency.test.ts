import { afterAll, beforeAll, expect, test } from "bun:test";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { startSocketServer, type SocketServer } from "../support/in-process-server.ts";

let server: SocketServer;
beforeAll(async () => {
  server = await startSocketServer();
  const store = SqliteStore.open(server.statePath);
  await store.setPlan("small", { maxBatchSize: 100, monthlyUnits: 1000, rateLimit: null });
  await store.close();
});
afterAll(() => server?.close());

test("concurrent batches on a real socket never spend more than the quota", async () => {
  const store = SqliteStore.open(server.statePath);
  const { key, secret } = await store.createKey("racer", "small");
  await Bun.sleep(600);

  const ips = Array.from({ length: 37 }, (_, i) => `8.8.${i}.8`);
  const send = () =>
    fetch(`${server.url}/v1/lookup/batch`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify({ ips }),
    });
  const responses = await Promise.all(Array.from({ length: 60 }, send));
  const statuses = responses.map((response) => response.status);
  const answered = statuses.filter((status) => status === 200).length;
  expect(answered).toBe(Math.floor(1000 / 37));
  expect(statuses.filter((status) => status === 429).length).toBe(60 - answered);
  for (const response of responses.filter((r) => r.status === 429)) {
    expect(((await response.json()) as { code: string }).code).toBe("quota_exceeded");
  }
  const period = new Date().toISOString().slice(0, 7);
  expect(await store.unitsUsed(key.id, period)).toBe(answered * 37);
  await store.close();
});

test("batches that divide the quota spend it exactly, to the last unit", async () => {
  const store = SqliteStore.open(server.statePath);
  const { key, secret } = await store.createKey("exact", "small");
  await Bun.sleep(600);
  const ips = Array.from({ length: 40 }, (_, i) => `9.9.${i}.9`);
  const responses = await Promise.all(
    Array.from({ length: 50 }, () =>
      fetch(`${server.url}/v1/lookup/batch`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ ips }),
      }),
    ),
  );
  expect(responses.filter((response) => response.status === 200)).toHaveLength(25);
  const period = new Date().toISOString().slice(0, 7);
  expect(await store.unitsUsed(key.id, period)).toBe(1000);
  await store.close();
});
