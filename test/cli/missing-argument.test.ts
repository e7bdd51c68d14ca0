import { expect, test } from "bun:test";
import { defaultDataPath } from "../../src/config/paths.ts";
import { runCliInProcess } from "../support/in-process-cli.ts";

const run = (args: string[]) => runCliInProcess(defaultDataPath(), args);

/** Each command that takes an argument, run without it (or some of them): the missing ones, as its usage names them. */
test.each([
  [["keys", "revoke"], "ID"],
  [["keys", "rotate"], "ID"],
  [["keys", "update"], "ID"],
  [["keys", "set-plan"], "ID PLAN"],
  [["keys", "set-plan", "key_x"], "PLAN"],
  [["admin", "revoke"], "ID"],
  [["plans", "set"], "NAME"],
  [["corrections", "set"], "CIDR"],
  [["corrections", "remove"], "CIDR"],
  [["webhooks", "add"], "URL"],
  [["webhooks", "remove"], "ID"],
  [["webhooks", "test"], "ID"],
  [["webhooks", "deliveries"], "ID"],
  [["backup"], "FILE"],
  [["lookup"], "IP"],
])("%p: missing %s, exit 2", async (args, names) => {
  const result = await run(args);
  expect(result).toEqual({ code: 2, stdout: "", stderr: `iplookup: missing argument${names.includes(" ") ? "s" : ""} ${names}\n` });
  // The names are those of the command's usage line.
  const usage = (await run([...args.filter((arg) => !arg.startsWith("key_")), "--help"])).stdout.split("\n")[0] as string;
  for (const name of names.split(" ")) expect(usage.split(" ")).toContain(name === "IP" ? "IP..." : name);
});
