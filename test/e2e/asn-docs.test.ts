import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { cli } from "../support/server-process.ts";
import { makeTestApp, type TestApp } from "../support/test-app.ts";

/**
 * docs/autonomous-systems.md shows real output: every ```sh block of one command followed
 * by a ```text block (its output) is run (`iplookup asn …` as the CLI, `curl …
 * localhost:8080/PATH` through the app on the default data) and what it prints is
 * compared with the text block. A command ending in `|| echo "exit $?"` (a refusal, so
 * that the guides' test, which runs every ```sh block under `set -e`, goes on) prints
 * its exit code last, as the shell would.
 */

const DOC = join(import.meta.dir, "..", "..", "docs", "autonomous-systems.md");
const EXIT_CODE = ' || echo "exit $?"';

interface Example {
  readonly command: string;
  readonly output: string;
}

function examples(): Example[] {
  const found: Example[] = [];
  for (const block of readFileSync(DOC, "utf8").matchAll(/```sh\n([^\n]*)\n```\n\n```text output\n([\s\S]*?)```/g)) {
    found.push({ command: block[1] as string, output: (block[2] as string).trimEnd() });
  }
  return found;
}

/** Shell words: spaces split, double or single quotes group. */
function words(command: string): string[] {
  return [...command.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2] ?? (match[3] as string));
}

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await makeTestApp();
  key = (await t.issueKey("unlimited")).secret;
});
afterAll(() => t.close());

test("the guide has examples of both routes, their refusals and the CLI", () => {
  const commands = examples().map((example) => example.command);
  expect(commands.filter((command) => command.startsWith("curl")).length).toBeGreaterThanOrEqual(6);
  expect(commands.filter((command) => command.startsWith("iplookup asn")).length).toBeGreaterThanOrEqual(4);
});

test.each(examples().map((example) => [example.command, example] as const))("%s", async (_, example) => {
  const showsExitCode = example.command.endsWith(EXIT_CODE);
  const [program, ...args] = words(showsExitCode ? example.command.slice(0, -EXIT_CODE.length) : example.command);
  if (program === "iplookup") {
    const result = cli(args);
    const exit = showsExitCode && result.code !== 0 ? `\nexit ${result.code}` : "";
    expect(`${`${result.stdout}${result.stderr}`.trimEnd()}${exit}`).toBe(example.output);
    return;
  }
  expect(program).toBe("curl");
  const url = args.find((arg) => arg.startsWith("localhost:8080/"));
  expect(url).toBeDefined();
  const response = await t.request("GET", url!.slice("localhost:8080".length), { key });
  expect(await response.text()).toBe(example.output);
});
