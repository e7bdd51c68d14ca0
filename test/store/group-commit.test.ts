import { expect, test } from "bun:test";
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
