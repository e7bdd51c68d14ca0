import { afterAll, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { asnIndexOf } from "../../src/asn/asn-index.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { LiveIndex, LoaderUnavailableError, onThisThread, type IndexLoader } from "../../src/index/live-index.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { offThreadLoader } from "../../src/serve/index-loader.ts";

/**
 * A server loads its data file, on reload, and builds the AS index of the data it
 * started with on a loader thread (serve/index-loader.ts), so its main thread, which
 * serves too, goes on answering meanwhile.
 */

const WORKER_ENTRY = new URL("../../src/serve/worker-thread.ts", import.meta.url).href;
const loader = offThreadLoader(WORKER_ENTRY);
const dir = mkdtempSync(join(tmpdir(), "iplookup-index-loader-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const probes = ["1.1.1.1", "8.8.8.8", "2606:4700:4700::1111", "203.0.113.9"].map((text) => parseAddress(text)!);
const answersOf = (index: RangeIndex) => probes.map((address) => index.lookup(address));

/** A copy of the default data, to reload and replace. */
function dataCopy(name: string): string {
  const path = join(dir, name);
  copyFileSync(defaultDataPath(), path);
  return path;
}

/** How many timer callbacks this thread ran while `work` was under way. */
async function ticksDuring(work: () => Promise<unknown>): Promise<number> {
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  try {
    await work();
  } finally {
    clearInterval(timer);
  }
  return ticks;
}

test("a load on the loader thread answers as a load on this thread, with its AS index built, in shared memory", async () => {
  const path = dataCopy("load.db");
  const here = RangeIndex.open(path);
  const there = await loader.load(path);
  expect(answersOf(there)).toEqual(answersOf(here));
  expect(there.info).toEqual(here.info);
  expect(there.image.asn).toBeDefined();
  for (const array of Object.values(there.image.asn!)) if (array !== null) expect((array as Uint8Array).buffer).toBeInstanceOf(SharedArrayBuffer);
  expect(there.image.v4Starts.buffer).toBeInstanceOf(SharedArrayBuffer);
  expect(asnIndexOf(there).result(13335)).toEqual(asnIndexOf(here).result(13335));
});

test("the AS index of the data loaded at start is built on the loader thread, into the same image", async () => {
  const index = RangeIndex.open(dataCopy("build.db"));
  expect(index.image.asn).toBeUndefined();
  const ticks = await ticksDuring(() => loader.buildAsn(index));
  expect(index.image.asn).toBeDefined();
  expect(ticks).toBeGreaterThan(0);
  expect(asnIndexOf(index).result(13335)).toEqual(asnIndexOf(RangeIndex.open(defaultDataPath())).result(13335));
  // One built on this thread meanwhile stays.
  const other = RangeIndex.open(dataCopy("build-2.db"));
  const building = loader.buildAsn(other);
  const here = asnIndexOf(other).image;
  await building;
  expect(other.image.asn).toBe(here);
});

test("a reload leaves this thread free while it loads (on this thread it does not), then swaps", async () => {
  const path = dataCopy("reload.db");
  const live = new LiveIndex(path, () => {}, loader);
  const before = live.current();
  let swapped: boolean | undefined;
  expect(await ticksDuring(async () => (swapped = await live.reload()))).toBeGreaterThan(0);
  expect(swapped).toBe(true);
  expect(live.current()).not.toBe(before);
  expect(answersOf(live.current())).toEqual(answersOf(before));
  expect(live.current().image.asn).toBeDefined();

  const here = new LiveIndex(path, () => {}, onThisThread);
  expect(await ticksDuring(() => here.reload())).toBe(0);
});

test("a file that cannot be loaded: the load's error, the old index kept", async () => {
  const path = dataCopy("damaged.db");
  const outcomes: unknown[] = [];
  const live = new LiveIndex(path, (outcome) => outcomes.push(outcome.ok ? "ok" : (outcome.error as Error).message), loader);
  const before = live.current();
  const bad = join(dir, "bad.db");
  writeFileSync(bad, "this is not a data file, nor any database at all, but it is long enough to be read as one".repeat(64));
  let expected = "";
  try {
    RangeIndex.open(bad);
  } catch (error) {
    expected = (error as Error).message;
  }
  expect(expected).not.toBe("");
  renameSync(bad, path);
  expect(await live.reload()).toBe(false);
  expect(outcomes).toEqual([expected]);
  expect(live.current()).toBe(before);
});

test("reloads asked for while one runs: one more follows it, however many are asked; after stop, nothing swaps", async () => {
  const path = dataCopy("queued.db");
  let loads = 0;
  let release = () => {};
  const gate = new Promise<void>((resolve) => (release = resolve));
  const counting: IndexLoader = {
    async load(file) {
      loads++;
      await gate;
      return onThisThread.load(file);
    },
    buildAsn: onThisThread.buildAsn,
  };
  const reports: boolean[] = [];
  const live = new LiveIndex(path, (outcome) => reports.push(outcome.ok), counting);
  const first = live.reload();
  const more = [live.reload(), live.reload(), live.reload()];
  expect(more[1]).toBe(more[0]!);
  expect(loads).toBe(1);
  release();
  expect(await first).toBe(true);
  expect(await Promise.all(more)).toEqual([true, true, true]);
  expect(loads).toBe(2);
  expect(reports).toEqual([true, true]);

  const swapped = live.current();
  const late = live.reload();
  live.stop();
  expect(await late).toBe(false);
  expect(live.current()).toBe(swapped);
  expect(reports).toEqual([true, true]);
});

test("a load cut short by its signal rejects at once, ending its loader thread", async () => {
  const stopping = new AbortController();
  const loading = loader.load(dataCopy("aborted.db"), stopping.signal);
  stopping.abort();
  await expect(loading).rejects.toThrow("stopped while the loader thread worked");
  const index = RangeIndex.open(dataCopy("aborted-asn.db"));
  const building = loader.buildAsn(index, stopping.signal);
  await expect(building).rejects.toThrow("stopped before the loader thread started");
  expect(index.image.asn).toBeUndefined();
});

/** A loader whose loads each wait for their own release (or their signal), counted. */
function gatedLoader() {
  const releases: (() => void)[] = [];
  const signals: (AbortSignal | undefined)[] = [];
  const gated: IndexLoader = {
    async load(file, signal) {
      signals.push(signal);
      await new Promise<void>((resolve, reject) => {
        releases.push(resolve);
        signal?.addEventListener("abort", () => reject(new Error("stopped")));
      });
      return onThisThread.load(file);
    },
    buildAsn: onThisThread.buildAsn,
  };
  return { gated, releases, signals };
}

async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done() && waited < 5000; waited += 10) await Bun.sleep(10);
  expect(done()).toBe(true);
}

test("stop cuts short the load under way, and a reload queued behind it never starts", async () => {
  const { gated, releases, signals } = gatedLoader();
  const reports: boolean[] = [];
  const live = new LiveIndex(dataCopy("stopped.db"), (outcome) => reports.push(outcome.ok), gated);
  const before = live.current();
  const first = live.reload();
  const queued = live.reload();
  expect(releases).toHaveLength(1);
  live.stop();
  expect(signals[0]?.aborted).toBe(true);
  expect(await first).toBe(false);
  expect(await queued).toBe(false);
  expect(releases).toHaveLength(1);
  expect(reports).toEqual([]);
  expect(live.current()).toBe(before);
});

test("a file replaced again while it loads is loaded once more, and no more than that", async () => {
  const path = dataCopy("replaced.db");
  const { gated, releases } = gatedLoader();
  const reports: boolean[] = [];
  const live = new LiveIndex(path, (outcome) => reports.push(outcome.ok), gated);
  live.watch(10);
  try {
    const replace = (name: string) => {
      copyFileSync(defaultDataPath(), join(dir, name));
      renameSync(join(dir, name), path);
    };
    replace("replaced-b.db");
    await until(() => releases.length === 1);
    replace("replaced-c.db");
    // The watcher sees the second file while the first load runs, and queues one more.
    await Bun.sleep(100);
    releases[0]!();
    await until(() => releases.length === 2);
    // Several polls while the second load runs: the file is the one it loads.
    await Bun.sleep(100);
    releases[1]!();
    await until(() => reports.length === 2);
    await Bun.sleep(100);
    expect(releases).toHaveLength(2);
    expect(reports).toEqual([true, true]);
  } finally {
    live.stop();
  }
});

test("the watcher loads a file again when its mode changes (a file made readable), though its bytes did not", async () => {
  const path = dataCopy("mode.db");
  const reports: boolean[] = [];
  const live = new LiveIndex(path, (outcome) => reports.push(outcome.ok));
  live.watch(10);
  try {
    await Bun.sleep(50);
    expect(reports).toEqual([]);
    chmodSync(path, 0o640);
    await until(() => reports.length === 1);
    expect(reports).toEqual([true]);
  } finally {
    live.stop();
  }
});

test("a load that could not start (no descriptors for a loader thread) is tried again by the watcher, the file unchanged", async () => {
  const path = dataCopy("unstarted.db");
  let refusals = 1;
  const loader: IndexLoader = {
    async load(file) {
      if (refusals-- > 0) throw new LoaderUnavailableError("too few file descriptors are free to start a loader thread");
      return onThisThread.load(file);
    },
    buildAsn: onThisThread.buildAsn,
  };
  const reports: boolean[] = [];
  const live = new LiveIndex(path, (outcome) => reports.push(outcome.ok), loader);
  live.watch(10, 100);
  try {
    expect(await live.reload()).toBe(false);
    await until(() => reports.length === 2);
    expect(reports).toEqual([false, true]);
    // A file that failed for what it holds is not tried again until it changes.
    await Bun.sleep(200);
    expect(reports).toEqual([false, true]);
  } finally {
    live.stop();
  }
});
