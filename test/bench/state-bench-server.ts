/**
 * The real iplookup app on a socket over any state store, for the bench of the stores:
 * `bun state-bench-server.ts PORT STATE STATS_FILE`, STATE a SQLite file path or a
 * `postgres://` URL (opened with openStore, as `serve` does). Creates an unlimited key
 * and prints {"key": …, "port": …} once listening. On SIGTERM it stops, closes the store
 * (every charge committed), and writes to STATS_FILE the store's chargeStats (the charges
 * committed, the groups that carried them, how many went in one statement: {"groups": …,
 * "items": …, "quick": …, …}), or null for a store that does not count them.
 */
import { writeFileSync } from "node:fs";
import { KeyCache } from "../../src/access/key-cache.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { createApp } from "../../src/http/app.ts";
import { PUBLIC_ROUTES } from "../../src/http/routes.ts";
import { listen } from "../../src/http/server.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { createLogger } from "../../src/log/logger.ts";
import { Metrics } from "../../src/metrics/metrics.ts";
import { openStore } from "../../src/store/open-store.ts";

const [port = "0", state = ":memory:", statsFile] = process.argv.slice(2);
const store = await openStore(state);
const { secret } = await store.createKey("bench", "unlimited");
const keys = await KeyCache.load(store);
const index = RangeIndex.open(defaultDataPath());
const metrics = new Metrics(Metrics.table(PUBLIC_ROUTES, 1));
const app = createApp({ store, keys, index: () => index, clock: { now: () => new Date() }, metrics });
const logger = createLogger("warn", (line) => process.stderr.write(`${line}\n`));
const server = listen(app, { host: "127.0.0.1", port: Number(port), metrics, logger });
console.log(JSON.stringify({ key: secret, port: server.port }));
process.on("SIGTERM", async () => {
  await server.stop();
  await store.close();
  const stats = (store as { chargeStats?: object }).chargeStats ?? null;
  if (statsFile) writeFileSync(statsFile, JSON.stringify(stats));
  process.exit(0);
});
