import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { readServeConfig } from "../../src/config/serve-config.ts";
import { postgresAvailable, testStates } from "../support/postgres.ts";
import { configErrorOf as errorOf, configFiles } from "../support/config-files.ts";

/**
 * A --state value with blanks around a postgres:// URL is that URL, wherever it is given
 * (flag, environment, configuration file); any other text holding `://` is refused. None
 * becomes a SQLite file's path: a folder named after the URL, its password included,
 * would be made in the working directory, and the path printed.
 */

const dir = mkdtempSync(join(tmpdir(), "iplookup-state-location-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const URL_TEXT = "postgres://iplookup:s3cret-pw@127.0.0.1:47001/iplookup";
const PADDED = [` ${URL_TEXT}`, `${URL_TEXT} `, `\t${URL_TEXT}\t`, `  ${URL_TEXT.replace("postgres:", "postgresql:")}`];

const configFile = configFiles(dir);

describe("a postgres:// URL with blanks around it is the URL", () => {
  test.each(PADDED)("flag, environment variable and file: %p", (text) => {
    const expected = text.trim();
    expect(readServeConfig({ state: text }, {}).statePath).toBe(expected);
    expect(readServeConfig({}, { IPLOOKUP_STATE: text }).statePath).toBe(expected);
    expect(readServeConfig({ config: configFile(`state = ${JSON.stringify(text)}\n`) }, {}).statePath).toBe(expected);
  });
});

describe("other text holding :// is refused, its password hidden", () => {
  test.each([
    [`'${URL_TEXT}'`, "is neither a SQLite file's path nor a URL"],
    [`./${URL_TEXT}`, "is neither a SQLite file's path nor a URL"],
    ["://iplookup:s3cret-pw@db/x", "is neither a SQLite file's path nor a URL"],
    [` mysql://iplookup:s3cret-pw@db/x`, "is a URL iplookup cannot open"],
    // A blank in the password: hidden whole, to the last @.
    ["mysql://iplookup:s3cret-pw x@db/x", "is a URL iplookup cannot open"],
    ["'postgres://iplookup:s3cret-pw x@db/x'", "is neither a SQLite file's path nor a URL"],
    ["mysql://iplookup:x s3cret-pw@db/x", "is a URL iplookup cannot open"],
  ])("%p", (text, why) => {
    const file = configFile(`\nstate = ${JSON.stringify(text)}\n`);
    for (const [message, name] of [
      [errorOf(() => readServeConfig({ state: text }, {})), "--state"],
      [errorOf(() => readServeConfig({}, { IPLOOKUP_STATE: text })), "IPLOOKUP_STATE"],
      [errorOf(() => readServeConfig({ config: file }, {})), `${basename(file)}:2: state`],
    ] as const) {
      expect(message).toContain(name);
      expect(message).toContain(why);
      expect(message).toContain(":***@");
      expect(message).not.toContain("s3cret-pw");
    }
  });
});

/** The CLI run in `dir`, where a path made of the URL would appear. */
function cliIn(args: string[], env: Record<string, string> = {}) {
  const result = Bun.spawnSync([process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts"), ...args], {
    cwd: dir,
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
    killSignal: "SIGKILL",
  });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

const madeInDir = () => readdirSync(dir).filter((name) => !name.startsWith("config-"));

test("config check shows the URL without its password, from a flag, the environment or a file", () => {
  for (const [args, env] of [
    [["--state", ` ${URL_TEXT}`], {}],
    [[], { IPLOOKUP_STATE: `${URL_TEXT}\t` }],
    [["--config", configFile(`state = " ${URL_TEXT} "\n`)], {}],
  ] as const) {
    const result = cliIn(["config", "check", "--json", ...args], env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).not.toContain("s3cret-pw");
    expect(JSON.parse(result.stdout).settings.state.value).toBe("postgres://iplookup:***@127.0.0.1:47001/iplookup");
  }
  const refused = cliIn(["config", "check", "--state", `'${URL_TEXT}'`]);
  expect(refused.code).toBe(2);
  expect(refused.stdout).toBe("");
  expect(refused.stderr).not.toContain("s3cret-pw");
  expect(madeInDir()).toEqual([]);
});

test("config check hides every password in the URL's query too: password and sslpassword", () => {
  const result = cliIn(["config", "check", "--json", "--state", "postgres://127.0.0.1/db?password=qpw-secret&sslpassword=sp-secret"]);
  expect(result.stderr).toBe("");
  expect(result.code).toBe(0);
  expect(result.stdout).not.toContain("qpw-secret");
  expect(result.stdout).not.toContain("sp-secret");
  expect(JSON.parse(result.stdout).settings.state.value).toBe("postgres://127.0.0.1/db?password=***&sslpassword=***");
});

test("a state database that cannot be reached: the message hides every password and keeps the colon after the URL, with a query or without", () => {
  for (const [url, shown] of [
    ["postgres://u:pw-user@127.0.0.1:1/db?password=pw-query&sslpassword=pw-ssl", "postgres://u:***@127.0.0.1:1/db?password=***&sslpassword=***"],
    ["postgres://127.0.0.1:1/db?password=pw-query", "postgres://127.0.0.1:1/db?password=***"],
    ["postgres://u:pw-user@127.0.0.1:1/db", "postgres://u:***@127.0.0.1:1/db"],
  ] as const) {
    const result = cliIn(["keys", "list", "--state", url]);
    expect(result.code).toBe(1);
    expect(result.stderr).toStartWith(`iplookup: cannot reach the state database at ${shown}: `);
    expect(result.stderr).not.toContain("pw-");
  }
});

describe.skipIf(!postgresAvailable)("commands on a padded URL open the PostgreSQL database", () => {
  const states = testStates();

  test("keys create and keys list, from the flag and the environment: no file is made", async () => {
    const url = await states.fresh();
    const created = cliIn(["keys", "create", "--name", "padded", "--json", "--state", ` ${url}`]);
    expect(created.stderr).toBe("");
    expect(created.code).toBe(0);
    const listed = cliIn(["keys", "list", "--json"], { IPLOOKUP_STATE: `${url}\t` });
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout).map((key: { name: string }) => key.name)).toEqual(["padded"]);
    expect(madeInDir()).toEqual([]);
  });
});

test("state copy reads --from and --to as --state: a quoted URL is refused, naming the flag", () => {
  const result = cliIn(["state", "copy", "--from", join(dir, "nowhere.db"), "--to", `'${URL_TEXT}'`]);
  expect(result.code).toBe(2);
  expect(result.stderr).toStartWith("iplookup: --to: ");
  expect(result.stderr).not.toContain("s3cret-pw");
  expect(madeInDir()).toEqual([]);
});

describe("a state path that names no SQLite file is refused (exit 2), and nothing is made", () => {
  test.each([
    // SQLite's URI file name: a folder `file:` would be made in the working directory.
    ["file:/srv/iplookup/state.db", 'starts with a URL\'s scheme (file:), and iplookup opens no URL but postgres://'],
    ["file:state.db?mode=rwc", "starts with a URL's scheme (file:)"],
    ["sqlite:state.db", "starts with a URL's scheme (sqlite:)"],
    // A folder's path: a file named after the folder would be made beside it.
    ["states/", 'ends with /, so it names a folder: give the state file\'s path in it (states/state.db)'],
  ])("%p, from a flag, the environment or a file", (text, why) => {
    for (const message of [
      errorOf(() => readServeConfig({ state: text }, {})),
      errorOf(() => readServeConfig({}, { IPLOOKUP_STATE: text })),
      errorOf(() => readServeConfig({ config: configFile(`state = ${JSON.stringify(text)}\n`) }, {})),
    ]) {
      expect(message).toContain(why);
    }
    const created = cliIn(["keys", "create", "--name", "k", "--state", text]);
    expect(created.stderr).toContain(why);
    expect(created.code).toBe(2);
    expect(madeInDir()).toEqual([]);
  });

  test("a file whose name holds a colon after ./, and :memory:, are as they were", () => {
    expect(readServeConfig({ state: "./state:2026.db" }, {}).statePath).toBe(join(process.cwd(), "state:2026.db"));
    expect(readServeConfig({ state: ":memory:" }, {}).statePath).toBe(":memory:");
  });
});
