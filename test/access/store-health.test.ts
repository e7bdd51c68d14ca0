import { describe, expect, test } from "bun:test";
import { sharedStoreMarks, StoreHealth } from "../../src/access/store-health.ts";

describe("StoreHealth", () => {
  test("one thread alone: unreachable from its first failure until its next success, one change each way", () => {
    const changes: [boolean, unknown][] = [];
    const health = new StoreHealth((reachable, error) => changes.push([reachable, error]));
    expect(health.reachable).toBe(true);
    health.markReachable();
    health.markUnreachable("cut");
    health.markUnreachable("still cut");
    expect(health.reachable).toBe(false);
    health.markReachable();
    health.markReachable();
    expect(health.reachable).toBe(true);
    expect(changes).toEqual([
      [false, "cut"],
      [true, undefined],
    ]);
  });

  test("the threads of a server answer alike: the store is unreachable for all from the first thread that finds it so, until every thread reaches it again", () => {
    const marks = sharedStoreMarks(3);
    const changes: string[] = [];
    const threads = [0, 1, 2].map((t) => new StoreHealth((reachable) => changes.push(`${t}:${reachable}`), marks, t));
    threads[1]!.markUnreachable(new Error("read timed out"));
    expect(threads.map((health) => health.reachable)).toEqual([false, false, false]);
    threads[2]!.markUnreachable(new Error("read timed out"));
    threads[1]!.markReachable();
    // Thread 2 has not reached the store since it found it away.
    expect(threads.map((health) => health.reachable)).toEqual([false, false, false]);
    threads[2]!.markReachable();
    expect(threads.map((health) => health.reachable)).toEqual([true, true, true]);
    // Each thread says only what its own calls found (one log line each way).
    expect(changes).toEqual(["1:false", "2:false", "1:true", "2:true"]);
  });

  test("the marks are shared with worker threads as the server's setup carries them (posted, not copied)", async () => {
    const marks = sharedStoreMarks(2);
    const main = new StoreHealth(() => {}, marks, 0);
    const source = `
      import { StoreHealth } from ${JSON.stringify(new URL("../../src/access/store-health.ts", import.meta.url).href)};
      let health;
      self.onmessage = ({ data }) => {
        health ??= new StoreHealth(() => {}, data.marks, 1);
        health[data.mark]("away");
        postMessage(health.reachable);
      };
    `;
    const worker = new Worker(URL.createObjectURL(new Blob([source], { type: "application/javascript" })));
    const ask = (mark: "markUnreachable" | "markReachable") =>
      new Promise<boolean>((resolve) => {
        worker.onmessage = ({ data }) => resolve(data as boolean);
        worker.postMessage({ marks, mark });
      });
    try {
      expect(await ask("markUnreachable")).toBe(false);
      expect(main.reachable).toBe(false);
      expect(await ask("markReachable")).toBe(true);
      expect(main.reachable).toBe(true);
    } finally {
      worker.terminate();
    }
  });

  test("a thread outside the marks is refused", () => {
    expect(() => new StoreHealth(() => {}, sharedStoreMarks(2), 2)).toThrow(RangeError);
  });
});
