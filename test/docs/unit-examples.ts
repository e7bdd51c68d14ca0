/**
 * The guides' systemd examples, their ```ini blocks (docs/README.md states the
 * convention). Each starts with a comment that says where it goes:
 *
 *   # systemctl edit UNIT              a drop-in for UNIT.service (the .deb's unit)
 *   # /etc/systemd/system/NAME.TYPE    a unit file of that name; one block may hold
 *                                      several, each from its own such comment
 *
 * so that test/docs/unit-examples.test.ts can hand each to `systemd-analyze verify`
 * where it would be installed, and .ci/unit-under-systemd.sh can install one.
 *
 * Run as a script, `bun test/docs/unit-examples.ts FILE TEXT` prints the one example of
 * FILE whose text holds TEXT.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { fencedBlocks } from "./guide-blocks.ts";

export interface UnitExample {
  readonly file: string;
  /** The line of the block's opening fence (1-based). */
  readonly line: number;
  /** A drop-in for `unit`, or the unit file `unit` itself. */
  readonly kind: "drop-in" | "unit";
  /** The unit's file name: `iplookup.service`, `iplookup-update.timer`. */
  readonly unit: string;
  readonly code: string;
}

const DROP_IN = /^# systemctl edit ([a-z0-9@._-]+)$/;
const UNIT_FILE = /^# \/etc\/systemd\/system\/([a-z0-9@._-]+\.[a-z]+)$/;

/** The examples of one Markdown text; an ```ini block without the comment is an error. */
export function unitExamples(markdown: string, file: string): UnitExample[] {
  return fencedBlocks(markdown, file)
    .filter((block) => block.info === "ini")
    .flatMap((block): UnitExample[] => {
      const lines = block.code.split("\n");
      const dropIn = DROP_IN.exec(lines[0] ?? "");
      if (dropIn) {
        const name = dropIn[1] as string;
        return [{ file, line: block.line, kind: "drop-in", unit: name.includes(".") ? name : `${name}.service`, code: block.code }];
      }
      if (!UNIT_FILE.test(lines[0] ?? "")) {
        throw new Error(`${file}:${block.line}: an \`\`\`ini block starts with "# systemctl edit UNIT" or "# /etc/systemd/system/NAME"`);
      }
      const starts = lines.flatMap((text, index) => (UNIT_FILE.test(text) ? [index] : []));
      return starts.map((start, at) => ({
        file,
        line: block.line,
        kind: "unit",
        unit: UNIT_FILE.exec(lines[start] as string)?.[1] as string,
        code: `${lines.slice(start, starts[at + 1] ?? lines.length).join("\n").trimEnd()}\n`,
      }));
    });
}

if (import.meta.main) {
  const [file, text] = process.argv.slice(2);
  if (!file || !text) throw new Error("usage: bun test/docs/unit-examples.ts FILE TEXT");
  const root = join(import.meta.dir, "..", "..");
  const found = unitExamples(readFileSync(join(root, file), "utf8"), file).filter((example) => example.code.includes(text));
  if (found.length !== 1) throw new Error(`${file}: ${found.length} systemd examples hold "${text}", not one`);
  process.stdout.write(`${(found[0] as UnitExample).code.trimEnd()}\n`);
}
