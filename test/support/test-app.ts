import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KeyCache } from "../../src/access/key-cache.ts";
import { createAdminApp } from "../../src/admin/admin-app.ts";
import { createApp, type App } from "../../src/http/app.ts";
import type { RangeIndex } from "../../src/index/range-index.ts";
import type { Logger } from "../../src/log/logger.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import type { IssuedKey } from "../../src/store/store.ts";
import { defaultIndex } from "./default-data.ts";

/** An app on the real data with a fresh state file, and a settable clock. */
export interface TestApp {
  readonly app: App;
  readonly store: SqliteStore;
  readonly keys: KeyCache;
  readonly dir: string;
  clock: Date;
  /** Creates a key on a plan and makes the app see it at once. */
  issueKey(plan?: string, name?: string): Promise<IssuedKey>;
  /** Sends a request through the app in-process. */
  request(method: string, path: string, options?: { key?: string; body?: unknown; headers?: Record<string, string> }): Promise<Response>;
  close(): Promise<void>;
}

/**
 * `prepareState`: makes the state file, at the path it is given, before the app opens it
 * (keys made with a store of its own, a file damaged).
 */
export async function makeTestApp(
  options: { index?: RangeIndex; maxBody?: number; logger?: Logger; prepareState?: (path: string) => Promise<void> } = {},
): Promise<TestApp> {
  const dir = mkdtempSync(join(tmpdir(), "iplookup-test-"));
  const context = { clock: new Date("2026-11-15T12:00:00Z") };
  await options.prepareState?.(join(dir, "state.db"));
  const store = SqliteStore.open(join(dir, "state.db"));
  const keys = await KeyCache.load(store);
  const index = options.index ?? defaultIndex();
  const app = createApp({ store, keys, index: () => index, clock: { now: () => context.clock, monotonicMs: () => context.clock.getTime() }, maxBody: options.maxBody, logger: options.logger });
  const testApp: TestApp = {
    app,
    store,
    keys,
    dir,
    get clock() {
      return context.clock;
    },
    set clock(value: Date) {
      context.clock = value;
    },
    async issueKey(plan = "unlimited", name = "test") {
      const issued = await store.createKey(name, plan);
      await keys.refresh();
      return issued;
    },
    request(method, path, { key, body, headers = {} } = {}) {
      const init: RequestInit = { method, headers: { ...headers } };
      const all = init.headers as Record<string, string>;
      if (key !== undefined) all.authorization = `Bearer ${key}`;
      if (body !== undefined) {
        all["content-type"] ??= "application/json";
        init.body = typeof body === "string" ? body : JSON.stringify(body);
      }
      return app.handle(new Request(`http://iplookup.test${path}`, init));
    },
    async close() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return testApp;
}

/** The admin app (CONTRACT §10) over a test app's store, as one worker's server has it. */
export function adminAppOf(t: TestApp) {
  return createAdminApp({ store: t.store, now: () => new Date(), version: "t", workers: 1, uptimeSeconds: () => 1, dataInfo: () => defaultIndex().info });
}
