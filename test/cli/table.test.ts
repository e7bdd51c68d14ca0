import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatTable } from "../../src/cli/table.ts";
import { cli } from "../support/server-process.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-table-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a table writes out a cell's bidirectional controls, so they cannot reorder its row; other text is as given", () => {
  const table = formatTable(["ID", "NAME"], [["key_1", "\u202Egnp.exe"], ["key_2", "שלום \u2067x\u2069 \u200F"]]);
  expect(table).toBe(["ID     NAME", "key_1  \\u202egnp.exe", "key_2  שלום \\u2067x\\u2069 \\u200f"].join("\n"));
});

test("keys list shows a name's right-to-left override written out; --json gives the name as stored", () => {
  const env = { IPLOOKUP_STATE: join(dir, "state.db") };
  const name = "billing\u202Ekcatta";
  expect(cli(["keys", "create", "--name", name], env).code).toBe(0);
  const listed = cli(["keys", "list"], env);
  expect(listed.code).toBe(0);
  expect(listed.stdout).toContain("billing\\u202ekcatta");
  expect(listed.stdout).not.toContain("\u202E");
  expect((JSON.parse(cli(["keys", "list", "--json"], env).stdout) as { name: string }[])[0]?.name).toBe(name);
});
