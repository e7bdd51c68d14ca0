import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { heavyTurn } from "./heavy-turn.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-heavy-turn-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a second turn begins only when the first ends, and ending a turn removes the lock", async () => {
  const lock = join(dir, "order.lock");
  const order: string[] = [];
  const endFirst = await heavyTurn({ lock });
  order.push("first began");
  const second = heavyTurn({ lock }).then((end) => {
    order.push("second began");
    return end;
  });
  await Bun.sleep(300);
  order.push("first ends");
  endFirst();
  (await second)();
  expect(order).toEqual(["first began", "first ends", "second began"]);
  expect(existsSync(lock)).toBe(false);
});

test("a lock whose holder is gone is taken over; one held by a live process is waited for, at most maxWaitMs", async () => {
  const lock = join(dir, "stale.lock");
  const gone = Bun.spawnSync(["true"]).pid;
  writeFileSync(lock, String(gone));
  const end = await heavyTurn({ lock, maxWaitMs: 5_000 });
  expect(readFileSync(lock, "utf8")).toBe(String(process.pid));
  end();

  writeFileSync(lock, String(process.ppid));
  const endAfterWaiting = await heavyTurn({ lock, maxWaitMs: 300 });
  endAfterWaiting();
  // Going ahead without the turn leaves the live holder's lock alone.
  expect(existsSync(lock)).toBe(true);
});
