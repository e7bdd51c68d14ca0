import { Database } from "bun:sqlite";
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../../src/cli/run.ts";
import { defaultDataPath } from "../../src/config/paths.ts";
import { cli } from "../support/server-process.ts";

/**
 * A data file that cannot be used is named, absolute, in the message, under the name it
 * was given as: --data, or IPLOOKUP_DATA (docs/command-line.md: --data is shown as an
 * absolute path in every message). Exit 2, a bad value.
 */

const dir = mkdtempSync(join(tmpdir(), "iplookup-data-errors-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const notData = join(dir, "not-data.db");
writeFileSync(notData, "not a database, not even close\n".repeat(100));
const damaged = join(dir, "damaged.db");
copyFileSync(defaultDataPath(), damaged);
{
  const db = new Database(damaged);
  db.run("UPDATE blobs SET bytes = zeroblob(length(bytes)) WHERE name = 'values:country_code'");
  db.close();
}

async function run(args: string[], env: Record<string, string> = {}) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    env,
    io: { out: (text) => void (stdout += `${text}\n`), err: (text) => void (stderr += `${text}\n`) },
    now: () => new Date(),
    defaultDataPath: defaultDataPath(),
    selfCommand: ["iplookup"],
  });
  return { code, stdout, stderr };
}

const COMMANDS = [
  ["lookup", "1.1.1.1"],
  ["asn", "AS13335"],
  ["data", "info"],
];

test.each(COMMANDS)("%s %s: a file that is no data file is named, under --data or IPLOOKUP_DATA", async (...command) => {
  expect(await run([...command, "--data", notData])).toEqual({ code: 2, stdout: "", stderr: `iplookup: --data: ${notData}: not an iplookup data file: file is not a database\n` });
  expect(await run(command, { IPLOOKUP_DATA: notData })).toEqual({ code: 2, stdout: "", stderr: `iplookup: IPLOOKUP_DATA: ${notData}: not an iplookup data file: file is not a database\n` });
});

test.each(COMMANDS)("%s %s: a damaged data file is named, under --data or IPLOOKUP_DATA", async (...command) => {
  const why = "the data file is damaged: its values:country_code table does not match the checksum recorded when it was built";
  expect(await run([...command, "--data", damaged])).toEqual({ code: 2, stdout: "", stderr: `iplookup: --data: ${damaged}: ${why}\n` });
  expect(await run(command, { IPLOOKUP_DATA: damaged })).toEqual({ code: 2, stdout: "", stderr: `iplookup: IPLOOKUP_DATA: ${damaged}: ${why}\n` });
});

test.each(COMMANDS)("%s %s: a data file cut short is damaged, not a file of another kind", async (...command) => {
  const why = "the data file is damaged: SQLite finds its pages malformed (SQLITE_CORRUPT), as a copy cut short or bytes changed on disk leave them";
  // Cut in its tables, and before its meta table.
  for (const size of [5_000_000, 4096]) {
    const cut = join(dir, `cut-${size}.db`);
    copyFileSync(defaultDataPath(), cut);
    truncateSync(cut, size);
    expect(await run([...command, "--data", cut])).toEqual({ code: 2, stdout: "", stderr: `iplookup: --data: ${cut}: ${why}\n` });
  }
});

test("data update on a data file cut short says it is damaged", async () => {
  const cut = join(dir, "cut-update.db");
  copyFileSync(defaultDataPath(), cut);
  truncateSync(cut, 4096);
  const { code, stderr } = await run(["data", "update", "--data", cut]);
  expect(stderr).toBe(`iplookup: ${cut}: the data file is damaged: SQLite finds its pages malformed (SQLITE_CORRUPT), as a copy cut short or bytes changed on disk leave them\n`);
  expect(code).toBe(1);
});

test("a missing file given by IPLOOKUP_DATA is named under it; the flag wins over it", async () => {
  const missing = join(dir, "missing.db");
  expect(await run(["lookup", "1.1.1.1"], { IPLOOKUP_DATA: missing })).toEqual({ code: 2, stdout: "", stderr: `iplookup: IPLOOKUP_DATA: there is no data file at ${missing}\n` });
  expect(await run(["config", "check"], { IPLOOKUP_DATA: missing })).toEqual({ code: 2, stdout: "", stderr: `iplookup: IPLOOKUP_DATA: there is no data file at ${missing}\n` });
  expect((await run(["lookup", "1.1.1.1", "--data", missing], { IPLOOKUP_DATA: notData })).stderr).toBe(`iplookup: --data: there is no data file at ${missing}\n`);
  expect(await run(["data", "update"], { IPLOOKUP_DATA: missing })).toEqual({ code: 2, stdout: "", stderr: `iplookup: IPLOOKUP_DATA: there is no data file at ${missing}\n` });
  expect((await run(["data", "update", "--data", missing], { IPLOOKUP_DATA: notData })).stderr).toBe(`iplookup: --data: there is no data file at ${missing}\n`);
});

test("serve names the file under IPLOOKUP_DATA, before it listens", () => {
  const result = cli(["serve", "--host", "127.0.0.1", "--port", "0", "--admin-port", "off", "--workers", "1", "--state", ":memory:"], { IPLOOKUP_DATA: notData });
  expect(result.stderr).toBe(`iplookup: IPLOOKUP_DATA: ${notData}: not an iplookup data file: file is not a database\n`);
  expect(result.code).toBe(2);
});
