/**
 * The real iplookup app on a socket, for the HTTP bench: `bun bench-server.ts PORT STATE`
 * (STATE a file path, or `:memory:` for an in-memory SQLite store). Creates an
 * unlimited key and prints {"key": …} once listening. Logs at LEVEL (default warn: the
 * access log is measured separately by running with --log-level info through the CLI).
 */
import { KeyCache } from "../../src/access/key-cache.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { createApp } from "../../src/http/app.ts";
import { PUBLIC_ROUTES } from "../../src/http/routes.ts";
import { listen } from "../../src/http/server.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { lineBuffer } from "../../src/log/line-buffer.ts";
import { createLogger } from "../../src/log/logger.ts";
import { Metrics } from "../../src/metrics/metrics.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";

const [port = "0", state = ":memory:", level = "warn"] = process.argv.slice(2);
const store = SqliteStore.open(state);
const { secret } = await store.createKey("bench", "unlimited");
const keys = await KeyCache.load(store);
const index = RangeIndex.open(defaultDataPath());
const metrics = new Metrics(Metrics.table(PUBLIC_ROUTES, 1));
const app = createApp({ store, keys, index: () => index, clock: { now: () => new Date() }, metrics });
// Lines batched per turn of the event loop and written to stderr, as serve writes them.
const lines = lineBuffer((text) => void process.stderr.write(`${text}\n`));
const logger = createLogger(level as "warn", lines.write);
const server = listen(app, { host: "127.0.0.1", port: Number(port), metrics, logger });
console.log(JSON.stringify({ key: secret, port: server.port }));
process.on("SIGTERM", async () => {
  await server.stop();
  await store.close();
  process.exit(0);
});
