// Runs the commands of the README and of every guide in docs/, so that a guide cannot
// rot: each file's ```sh blocks, in order, in one shell, in a throwaway folder that
// links to this checkout, with `iplookup` on PATH running the checkout
// (`bun src/main.ts`), HOME in the folder, and ports 8080 and 8081 replaced by free ones.
// A block with its output shown after it (```text output) prints what is shown.
// The convention, and the marks (background, postgres, root, ci-run), are in
// test/docs/guide-blocks.ts and docs/README.md.
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freePort } from "../support/ports.ts";
import { postgresReachable } from "../support/postgres-reachable.ts";
import { fencedBlocks, isShell, isShownOutput, MARKS, NOT_COMMANDS, outputDifference, scriptFor, shownOutputs, type GuideBlock } from "./guide-blocks.ts";

const root = join(import.meta.dir, "..", "..");
const files = ["README.md", ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`)];
const blocksOf = new Map(files.map((file) => [file, fencedBlocks(readFileSync(join(root, file), "utf8"), file)]));
const all = [...blocksOf.values()].flat();
const work = mkdtempSync(join(tmpdir(), "iplookup-guides-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** The database the PostgreSQL guide makes, dropped before and after it runs. */
const GUIDE_DATABASE = "iplookup_guide";
const postgres = await postgresReachable("postgres://postgres@127.0.0.1:5432/test");

function where(block: GuideBlock): string {
  return `${block.file}:${block.line}`;
}

describe("the fences", () => {
  test("every shell block is fenced ```sh with known marks; other fences are not commands", () => {
    const wrong = all
      .filter((block) => (isShell(block) ? block.marks.some((mark) => !(MARKS as readonly string[]).includes(mark)) : !NOT_COMMANDS.has(block.info.split(/\s+/)[0] as string)))
      .map((block) => `${where(block)}: \`\`\`${block.info}`);
    expect(wrong).toEqual([]);
  });

  test("a ```sh ci-run block is what .ci/run runs, word for word", () => {
    const ci = readFileSync(join(root, ".ci/run"), "utf8").split("\n").map((line) => line.trim());
    for (const block of all.filter((candidate) => candidate.marks.includes("ci-run"))) {
      for (const line of block.code.split("\n").map((text) => text.replace(/\s+#.*$/, "").trim()).filter((text) => text !== "")) {
        expect(ci, `${where(block)}: ${line}`).toContain(line);
      }
    }
  });

  test("a ```text output block follows a ```sh block the test runs; a block that prints an exit code has its output shown", () => {
    const misplaced: string[] = [];
    const unshown: string[] = [];
    for (const [file, blocks] of blocksOf) {
      const shown = shownOutputs(blocks);
      blocks.forEach((block, index) => {
        const before = blocks[index - 1];
        if (isShownOutput(block) && !(before && shown.get(before.line) === block.code && !before.marks.some((mark) => mark === "root" || mark === "ci-run"))) misplaced.push(where(block));
        if (isShell(block) && /echo "exit \$\?"/.test(block.code) && !shown.has(block.line)) unshown.push(`${file}:${block.line}`);
      });
    }
    expect(misplaced).toEqual([]);
    expect(unshown).toEqual([]);
    // The ones this convention was made for: a refused AS number (exit 1), a broken configuration file (exit 2).
    for (const [file, exit] of [["docs/autonomous-systems.md", "exit 1"], ["docs/configuration.md", "exit 2"]] as const) {
      expect([...shownOutputs(blocksOf.get(file) ?? []).values()].some((output) => output.trimEnd().endsWith(exit)), file).toBe(true);
    }
  });

  test("the guides' root blocks exist for CI to run (the .deb's install among them)", () => {
    expect(all.some((block) => block.marks.includes("root") && block.code.includes("apt-get install"))).toBe(true);
  });
});

describe("the commands", () => {
  const runnable = files.filter((file) => (blocksOf.get(file) ?? []).some((block) => isShell(block) && !block.marks.includes("root") && !block.marks.includes("ci-run")));
  test.each(runnable.map((file) => [file]))("%s", async (file) => {
    const folder = join(work, file.replaceAll("/", "-"));
    mkdirSync(join(folder, "bin"), { recursive: true });
    for (const entry of ["package.json", "bun.lock", "bunfig.toml", "tsconfig.json", "src", "node_modules", "data", "docs", "packaging", ".ci", "dist"]) symlinkSync(join(root, entry), join(folder, entry));
    writeFileSync(join(folder, "bin", "iplookup"), `#!/bin/sh\nexec "${process.execPath}" "${join(root, "src", "main.ts")}" "$@"\n`, { mode: 0o755 });
    const port = String(freePort());
    const adminPort = String(freePort());
    const blocks = (blocksOf.get(file) ?? [])
      .filter((block) => isShell(block) && !block.marks.includes("root") && !block.marks.includes("ci-run"))
      .filter((block) => (postgres ? true : !block.marks.includes("postgres")))
      .map((block) => ({ ...block, code: block.code.replaceAll("8080", port).replaceAll("8081", adminPort) }));
    if (!postgres && blocks.length === 0) return;
    const usesDatabase = blocks.some((block) => block.marks.includes("postgres"));
    const dropDatabase = () => Bun.spawnSync(["psql", "-h", "127.0.0.1", "-U", "postgres", "-d", "test", "-qc", `DROP DATABASE IF EXISTS ${GUIDE_DATABASE} WITH (FORCE)`]);
    if (usesDatabase) dropDatabase();
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith("IPLOOKUP_") && name !== "XDG_STATE_HOME") env[name] = value;
    Object.assign(env, {
      HOME: folder,
      PATH: `${join(folder, "bin")}:${dirname(process.execPath)}:${process.env.PATH ?? "/usr/bin:/bin"}`,
      IPLOOKUP_PORT: port,
      IPLOOKUP_ADMIN_PORT: adminPort,
      IPLOOKUP_WORKERS: "1",
    });
    const shown = shownOutputs(blocksOf.get(file) ?? []);
    const captured = new Set(blocks.filter((block) => shown.has(block.line)).map((block) => block.line));
    const script = scriptFor(blocks, { healthUrl: `http://127.0.0.1:${port}/healthz`, captured });
    writeFileSync(join(folder, "guide.sh"), script);
    const child = Bun.spawn(["bash", join(folder, "guide.sh")], { cwd: folder, env, stdout: "pipe", stderr: "pipe" });
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    if (usesDatabase) dropDatabase();
    const lastBlock = [...stderr.matchAll(/^::block (.+)$/gm)].at(-1)?.[1];
    const printed = (line: number) => (existsSync(join(folder, `output-${line}.txt`)) ? readFileSync(join(folder, `output-${line}.txt`), "utf8") : null);
    const lastOutput = lastBlock ? printed(Number(lastBlock.split(":").at(-1))) : null;
    expect(
      code,
      `${file}: failed in the block at ${lastBlock}\n--- stdout\n${stdout.slice(-3000)}\n--- stderr\n${stderr.slice(-3000)}${lastOutput === null ? "" : `\n--- its output\n${lastOutput.slice(-3000)}`}`,
    ).toBe(0);
    // Every block ran (a block that ends the script early would leave the rest unrun).
    expect([...stderr.matchAll(/^::block (.+)$/gm)].map((match) => match[1])).toEqual(blocks.map(where));
    // Each block with its output shown printed it (the ports replaced as in the commands).
    const differences = [...captured].flatMap((line) => {
      const difference = outputDifference(printed(line) ?? "", (shown.get(line) as string).replaceAll("8080", port).replaceAll("8081", adminPort));
      return difference === "" ? [] : [`${file}:${line} printed other than its output shows:\n${difference}`];
    });
    expect(differences.join("\n\n")).toBe("");
  }, 180_000);
});
