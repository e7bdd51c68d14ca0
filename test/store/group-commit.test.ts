import { describe, expect, test } from "bun:test";
import { GroupCommit } from "../../src/store/group-commit.ts";

test("items submitted in the same turn are committed together, results in order", async () => {
  const groups: number[][] = [];
  const commits = new GroupCommit<number, string>((items) => {
    groups.push([...items]);
    return items.map((item) => `r${item}`);
  });
  const results = await Promise.all([1, 2, 3].map((item) => commits.submit(item)));
  expect(results).toEqual(["r1", "r2", "r3"]);
  expect(groups).toEqual([[1, 2, 3]]);
  expect(await commits.submit(4)).toBe("r4");
  expect(groups).toEqual([[1, 2, 3], [4]]);
});

test("items from requests answered in the same event-loop turn share a commit", async () => {
  const sizes: number[] = [];
  const commits = new GroupCommit<number, number>((items) => {
    sizes.push(items.length);
    return items;
  });
  // Each submits after awaiting something of its own, as a request handler does.
  await Promise.all(Array.from({ length: 50 }, async (_, i) => {
    await Promise.resolve();
    await Promise.resolve();
    return commits.submit(i);
  }));
  expect(sizes).toEqual([50]);
});

test("a commit that throws rejects every item of its group, and only those", async () => {
  let fail = true;
  const commits = new GroupCommit<number, number>((items) => {
    if (fail) throw new Error("disk full");
    return items;
  });
  const first = await Promise.allSettled([commits.submit(1), commits.submit(2)]);
  expect(first).toEqual([
    { status: "rejected", reason: new Error("disk full") },
    { status: "rejected", reason: new Error("disk full") },
  ]);
  fail = false;
  expect(await commits.submit(3)).toBe(3);
});

test("flush commits what is queued at once; a later scheduled flush finds nothing", async () => {
  const scheduled: (() => void)[] = [];
  const groups: number[][] = [];
  const commits = new GroupCommit<number, number>(
    (items) => {
      groups.push([...items]);
      return items;
    },
    (flush) => scheduled.push(flush),
  );
  const pending = [commits.submit(1), commits.submit(2)];
  expect(scheduled).toHaveLength(1);
  expect(groups).toEqual([]);
  commits.flush();
  expect(await Promise.all(pending)).toEqual([1, 2]);
  scheduled[0]!();
  expect(groups).toEqual([[1, 2]]);
  const later = commits.submit(3);
  expect(scheduled).toHaveLength(2);
  scheduled[1]!();
  expect(await later).toBe(3);
  expect(groups).toEqual([[1, 2], [3]]);
});

describe("retrying a commit that fails for a passing reason", () => {
  const busy = Object.assign(new Error("database is locked"), { code: "SQLITE_BUSY" });
  const policy = (giveUpAfterMs: number) => ({
    isPassing: (error: unknown) => error === busy,
    giveUpAfterMs,
    giveUp: () => new Error("gave up"),
  });

  test("the group is tried again, joined by what arrived meanwhile, without blocking", async () => {
    let attempts = 0;
    const groups: number[][] = [];
    const commit = new GroupCommit<number, number>(
      (items) => {
        if (++attempts <= 3) throw busy;
        groups.push([...items]);
        return items.map((item) => item * 10);
      },
      undefined,
      policy(2000),
    );
    const first = [commit.submit(1), commit.submit(2)];
    await Bun.sleep(1); // the first attempt failed; the thread is free
    const late = commit.submit(3);
    expect(await Promise.all([...first, late])).toEqual([10, 20, 30]);
    expect(groups).toEqual([[1, 2, 3]]);
  });

  test("an item waiting past the limit is given up; a failure that does not pass rejects at once", async () => {
    const stuck = new GroupCommit<number, number>(() => { throw busy; }, undefined, policy(30));
    await expect(stuck.submit(1)).rejects.toThrow("gave up");
    const broken = new GroupCommit<number, number>(() => { throw new Error("disk I/O error"); }, undefined, policy(30));
    await expect(broken.submit(1)).rejects.toThrow("disk I/O error");
  });
});
