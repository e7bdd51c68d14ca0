import { expect, test } from "bun:test";
import { FailureReports } from "../../src/serve/failure-reports.ts";

/** FailureReports on a clock the test moves, with what it reported. */
function reports() {
  let now = 0;
  const lines: [string, string | null][] = [];
  const failures = new FailureReports((step, error) => lines.push([step, error]), () => now, 60_000);
  return { failures, lines, advance: (ms: number) => (now += ms) };
}

test("a step failing on every poll is reported once, then again at most once a minute while its message stays", () => {
  const { failures, lines, advance } = reports();
  for (let poll = 0; poll <= 240; poll++) {
    failures.failed("reloading keys", "permission denied for table keys");
    advance(250);
  }
  // 241 polls a quarter second apart: the first at 0 s, the last at 60 s.
  expect(lines).toEqual([
    ["reloading keys", "permission denied for table keys"],
    ["reloading keys", "permission denied for table keys"],
  ]);
});

test("a new message is reported at once; each step is followed apart", () => {
  const { failures, lines } = reports();
  failures.failed("reading the store's change counter", "a");
  failures.failed("reloading keys", "a");
  failures.failed("reading the store's change counter", "a");
  failures.failed("reading the store's change counter", "b");
  expect(lines).toEqual([
    ["reading the store's change counter", "a"],
    ["reloading keys", "a"],
    ["reading the store's change counter", "b"],
  ]);
});

test("working again is reported once for each step that failed, and a failure after it is new", () => {
  const { failures, lines } = reports();
  failures.passed();
  expect(lines).toEqual([]);
  failures.failed("reloading keys", "a");
  failures.passed();
  failures.passed();
  failures.failed("reloading keys", "a");
  expect(lines).toEqual([
    ["reloading keys", "a"],
    ["reloading keys", null],
    ["reloading keys", "a"],
  ]);
});
