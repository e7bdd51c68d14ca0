import { expect, test } from "bun:test";
import { defaultDataPath } from "../../src/config/paths.ts";
import { nearestName } from "../../src/cli/nearest.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";

const run = (args: string[]) => runCliInProcess(defaultDataPath(), args);

/** A flag's mistake is one line of iplookup's, exit 2, nothing on stdout. */
test.each([
  // A value that starts with a dash reads as a flag: node's parser said so in three lines.
  [["keys", "rotate", "key_x", "--grace", "-1h"], '--grace: "-1h" starts with a dash, so it reads as a flag; give it as --grace=-1h'],
  [["serve", "--port", "-1"], '--port: "-1" starts with a dash, so it reads as a flag; give it as --port=-1'],
  // Given that way, the value is read and judged as any other.
  [["serve", "--port=-1"], '--port: "-1" is not a whole number'],
  [["keys", "list", "--state"], "--state needs a value"],
  // A flag the command takes where the value was due: the value was forgotten.
  [["keys", "list", "--state", "--json"], '--state needs a value (to give "--json" as its value, write --state=--json)'],
  [["serve", "--port", "--admin-port", "9000"], '--port needs a value (to give "--admin-port" as its value, write --port=--admin-port)'],
  [["serve", "--port", "--admin-port=9000"], '--port needs a value (to give "--admin-port=9000" as its value, write --port=--admin-port=9000)'],
  // Any other word with a dash is still a value to join.
  [["keys", "list", "--state", "--nope"], '--state: "--nope" starts with a dash, so it reads as a flag; give it as --state=--nope'],
  [["keys", "list", "--json=yes"], "--json takes no value"],
  [["keys", "list", "--jsn"], "unknown flag --jsn (did you mean --json?); see 'iplookup keys list --help'"],
  [["lookup", "1.1.1.1", "--dta", "x"], "unknown flag --dta (did you mean --data?); see 'iplookup lookup --help'"],
  [["keys", "list", "--colour"], "unknown flag --colour; see 'iplookup keys list --help'"],
  [["keys", "list", "-x"], "unknown flag -x; see 'iplookup keys list --help'"],
  // A word of one dash reads as single-letter flags: named as typed, not by its first letter.
  [["lookup", "-1.1.1.1"], "unknown flag -1.1.1.1; see 'iplookup lookup --help'"],
  [["keys", "list", "-jx"], "unknown flag -jx; see 'iplookup keys list --help'"],
  [["serv"], "unknown command \"serv\" (did you mean \"serve\"?); see 'iplookup --help'"],
  [["kyes", "list"], "unknown command \"kyes\" (did you mean \"keys\"?); see 'iplookup --help'"],
  [["keys", "lst"], "unknown command \"keys lst\" (did you mean \"keys list\"?); see 'iplookup keys --help'"],
  [["frobnicate"], "unknown command \"frobnicate\"; see 'iplookup --help'"],
])("%p", async (args, line) => {
  expect(await run(args)).toEqual({ code: 2, stdout: "", stderr: `iplookup: ${line}\n` });
});

test("nearestName: one slip in a short name, two in a long one; none when two names are as near", () => {
  expect(nearestName("lst", ["list", "create"])).toBe("list");
  expect(nearestName("sreve", ["serve", "usage"])).toBe("serve");
  expect(nearestName("webhoks", ["webhooks", "keys"])).toBe("webhooks");
  expect(nearestName("rvoke", ["revoke", "rotate"])).toBe("revoke");
  expect(nearestName("ab", ["abc", "abd"])).toBeNull();
  expect(nearestName("xyz", ["list", "create"])).toBeNull();
  expect(nearestName("list", ["list"])).toBeNull();
});
