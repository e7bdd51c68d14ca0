import { expect, test } from "bun:test";
import { AsyncGroupCommit, ItemFailure, type AsyncGroupCommitOptions } from "../../src/store/async-group-commit.ts";

const OPTIONS: AsyncGroupCommitOptions = {
  maxInFlight: 1,
  maxGroupSize: 100,
  maxQueued: 1000,
  timeoutMs: 0,
  timeoutError: (reason) => new Error(reason),
};

/** A commit that records its groups and answers when told to. */
function controlledCommit() {
  const groups: number[][] = [];
  const pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  const commit = (items: readonly number[]) => {
    groups.push([...items]);
    return new Promise<number[]>((resolve, reject) => pending.push({ resolve: () => resolve(items.map((item) => item * 10)), reject }));
  };
  return { groups, pending, commit };
}

test("items submitted in one turn go as one group; results come back in order", async () => {
  const { groups, pending, commit } = controlledCommit();
  const grouper = new AsyncGroupCommit(commit, OPTIONS);
  const results = [1, 2, 3].map((item) => grouper.submit(item));
  await Bun.sleep(1);
  expect(groups).toEqual([[1, 2, 3]]);
  pending[0]!.resolve();
  expect(await Promise.all(results)).toEqual([10, 20, 30]);
  expect(grouper.stats).toEqual({ groups: 1, items: 3 });
});

test("items queued while a group is in flight go together as the next group, at once", async () => {
  const { groups, pending, commit } = controlledCommit();
  const grouper = new AsyncGroupCommit(commit, OPTIONS);
  const first = grouper.submit(1);
  await Bun.sleep(1);
  const later = [2, 3, 4].map((item) => grouper.submit(item));
  await Bun.sleep(1);
  expect(groups).toEqual([[1]]);
  pending[0]!.resolve();
  expect(await first).toBe(10);
  expect(groups).toEqual([[1], [2, 3, 4]]);
  pending[1]!.resolve();
  expect(await Promise.all(later)).toEqual([20, 30, 40]);
});

test("up to maxInFlight groups at once, each at most maxGroupSize", async () => {
  const { groups, pending, commit } = controlledCommit();
  const grouper = new AsyncGroupCommit(commit, { ...OPTIONS, maxInFlight: 2, maxGroupSize: 2 });
  const results = [1, 2, 3, 4, 5].map((item) => grouper.submit(item));
  await Bun.sleep(1);
  expect(groups).toEqual([[1, 2], [3, 4]]);
  pending[1]!.resolve();
  await results[3];
  expect(groups).toEqual([[1, 2], [3, 4], [5]]);
  pending[0]!.resolve();
  pending[2]!.resolve();
  expect(await Promise.all(results)).toEqual([10, 20, 30, 40, 50]);
});

test("a failed commit rejects every item of its group, and only those", async () => {
  const { pending, commit } = controlledCommit();
  const grouper = new AsyncGroupCommit(commit, OPTIONS);
  const failing = [1, 2].map((item) => grouper.submit(item));
  await Bun.sleep(1);
  const next = grouper.submit(3);
  pending[0]!.reject(new Error("broken"));
  expect((await Promise.allSettled(failing)).map((outcome) => (outcome as PromiseRejectedResult).reason.message)).toEqual(["broken", "broken"]);
  await Bun.sleep(1);
  pending[1]!.resolve();
  expect(await next).toBe(30);
});

test("an ItemFailure in an item's place rejects that item alone; the others of its group resolve", async () => {
  const grouper = new AsyncGroupCommit(async (items: readonly number[]) => items.map((item) => (item % 2 === 0 ? new ItemFailure(new Error(`no ${item}`)) : item * 10)), OPTIONS);
  const settled = await Promise.allSettled([1, 2, 3, 4].map((item) => grouper.submit(item)));
  expect(settled.map((outcome) => (outcome.status === "fulfilled" ? outcome.value : (outcome.reason as Error).message))).toEqual([10, "no 2", 30, "no 4"]);
  expect(grouper.stats).toEqual({ groups: 1, items: 4 });
});

test("an item still queued at its time leaves the queue and rejects; one in flight waits for its group's outcome", async () => {
  const { groups, pending, commit } = controlledCommit();
  const grouper = new AsyncGroupCommit(commit, { ...OPTIONS, timeoutMs: 30 });
  let inFlightSettled = false;
  const inFlight = grouper.submit(1).finally(() => (inFlightSettled = true));
  await Bun.sleep(1);
  const queued = grouper.submit(2).catch((error: Error) => error.message);
  expect(await queued).toBe("timeout");
  // Past its time, the item in flight is not recalled: its group may still commit, and
  // it is answered with what its group did.
  expect(inFlightSettled).toBe(false);
  pending[0]!.resolve();
  expect(await inFlight).toBe(10);
  await grouper.drain();
  // The queued item never reached a commit.
  expect(groups).toEqual([[1]]);
});

test("a group's commit is given its first item's deadline", async () => {
  const deadlines: number[] = [];
  const grouper = new AsyncGroupCommit(
    async (items: readonly number[], deadline: number) => {
      deadlines.push(deadline);
      return items;
    },
    { ...OPTIONS, timeoutMs: 500 },
  );
  const before = performance.now();
  await Promise.all([grouper.submit(1), grouper.submit(2)]);
  expect(deadlines).toHaveLength(1);
  expect(deadlines[0]!).toBeGreaterThanOrEqual(before + 500);
  expect(deadlines[0]!).toBeLessThanOrEqual(performance.now() + 500);
  const unlimited = new AsyncGroupCommit(async (items: readonly number[], deadline: number) => (deadlines.push(deadline), items), OPTIONS);
  await unlimited.submit(1);
  expect(deadlines[1]).toBe(Infinity);
});

test("a full queue refuses at once", async () => {
  const { pending, commit } = controlledCommit();
  const grouper = new AsyncGroupCommit(commit, { ...OPTIONS, maxQueued: 2 });
  const first = grouper.submit(1);
  await Bun.sleep(1);
  const queued = [grouper.submit(2), grouper.submit(3)];
  await expect(grouper.submit(4)).rejects.toThrow("queue-full");
  pending[0]!.resolve();
  await first;
  pending[1]!.resolve();
  expect(await Promise.all(queued)).toEqual([20, 30]);
});

test("drain commits what is queued and waits for every item's result", async () => {
  const { pending, commit } = controlledCommit();
  const grouper = new AsyncGroupCommit(commit, OPTIONS);
  const results = [grouper.submit(1), grouper.submit(2)];
  let drained = false;
  const draining = grouper.drain().then(() => (drained = true));
  await Bun.sleep(5);
  expect(drained).toBe(false);
  pending[0]!.resolve();
  await draining;
  expect(await Promise.all(results)).toEqual([10, 20]);
  await grouper.drain();
});

test("a group that hangs past abandonAfterMs is given up: its items reject, drain does not wait for it", async () => {
  const { groups, pending, commit } = controlledCommit();
  let abandoned = 0;
  const grouper = new AsyncGroupCommit(commit, { ...OPTIONS, timeoutMs: 30, abandonAfterMs: 60, onAbandon: () => abandoned++ });
  const given = grouper.submit(1).catch((error: Error) => error.message);
  await Bun.sleep(1);
  expect(groups).toEqual([[1]]);
  let drained = false;
  const draining = grouper.drain().then(() => (drained = true));
  await Bun.sleep(5);
  // The item still waits for its result: so does drain.
  expect(drained).toBe(false);
  expect(await given).toBe("timeout");
  expect(abandoned).toBe(1);
  // The group hangs (a connection gone silent); nobody waits for its outcome now.
  await draining;
  expect(pending).toHaveLength(1);
  pending[0]!.resolve();
});
