import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { copyFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * A checkout before `bun run data:default`: the sources and the installed packages,
 * without data/iplookup-data.db. The commands run from its top, as a new user would.
 */
const root = join(import.meta.dir, "..", "..");
const checkout = realpathSync(mkdtempSync(join(tmpdir(), "iplookup-checkout-")));
const dataFile = join(checkout, "data", "iplookup-data.db");
const state = join(checkout, "state", "state.db");

beforeAll(() => {
  cpSync(join(root, "src"), join(checkout, "src"), { recursive: true });
  for (const file of ["package.json", "tsconfig.json", "bunfig.toml"]) copyFileSync(join(root, file), join(checkout, file));
  symlinkSync(join(root, "node_modules"), join(checkout, "node_modules"));
  mkdirSync(join(checkout, "data"));
});
afterAll(() => rmSync(checkout, { recursive: true, force: true }));

function run(args: string[]) {
  const env: Record<string, string | undefined> = { ...process.env, IPLOOKUP_STATE: state };
  delete env.IPLOOKUP_DATA;
  const result = Bun.spawnSync([process.execPath, "src/main.ts", ...args], { cwd: checkout, env, stdout: "pipe", stderr: "pipe", timeout: 15_000 });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

describe("a checkout whose data is not built yet", () => {
  const howToBuild = `iplookup: the default data file ${dataFile} is not built yet; build it with 'bun run data:default' in ${checkout} (or name a data file with --data)\n`;

  test.each([
    [["lookup", "1.1.1.1"]],
    [["lookup", "--json", "1.1.1.1"]],
    [["data", "info"]],
    [["data", "info", "--json"]],
    [["serve", "--port", "0", "--workers", "1"]],
    [["serve", "--port", "0"]],
  ])("%p says how to build it and exits 1", (args) => {
    const result = run(args);
    expect(result).toEqual({ code: 1, stdout: "", stderr: howToBuild });
    expect(existsSync(dataFile)).toBe(false);
  });

  test("--version says the data is not built, and how to build it", () => {
    const result = run(["--version"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`data: not available (${howToBuild.slice("iplookup: ".length, -1)})`);
  });

  test("hints name the command as it is run here: bun src/main.ts", () => {
    expect(run(["keys", "list"]).stderr).toBe(
      `iplookup: there is no state file at ${state}; check --state or IPLOOKUP_STATE (a new state file is made by 'bun src/main.ts keys create --name NAME')\n`,
    );
    expect(run(["keys", "revokee"]).stderr).toBe(`iplookup: unknown command "keys revokee" (did you mean "keys revoke"?); see 'bun src/main.ts keys --help'\n`);
    expect(run(["plans", "set", "gold", "--max-batch", "1", "--monthly-units", "1", "--rate-limit", "1"]).code).toBe(0);
    expect(run(["keys", "list"]).stdout).toBe("No keys yet. Create one with: bun src/main.ts keys create --name NAME\n");
    expect(run(["keys", "revoke", "key_nope"]).stderr).toBe("iplookup: no key key_nope (see 'bun src/main.ts keys list')\n");
  });
});
