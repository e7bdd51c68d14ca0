/**
 * The guides' fenced code blocks, and the scripts that run them (docs/README.md states
 * the convention). A block fenced ```sh is a command a reader types; its marks, after
 * `sh`, say who runs it:
 *
 *   ```sh              test/docs/guides.test.ts, in a throwaway folder against the checkout
 *   ```sh background   the same, started in the background: the blocks after it run once
 *                      it answers /healthz on port 8080, and it is stopped at the file's end
 *   ```sh postgres     the same, where PostgreSQL answers at 127.0.0.1:5432 (else skipped)
 *   ```sh root         .ci/docs-root.sh, as root on the CI machine (apt, dpkg, systemctl)
 *   ```sh ci-run       a command .ci/run itself runs (checked to be there, word for word)
 *
 * Other fences are not commands (toml, ini, nginx, json, yaml, text, ts, …). A shell block
 * fenced any other way (```bash, ```shell, ```console, or bare ```) is refused by the
 * test, so a command cannot slip in unrun.
 *
 * A ```text output block right after a ```sh block (blank lines between them at most) is
 * what that block prints, stdout and stderr as a terminal shows them: the test compares
 * them line by line, `…` in the shown text standing for any run of characters within a
 * line (a temporary folder, an id). A command that is refused shows its exit code so,
 * `iplookup … || echo "exit $?"`, its output the reason and `exit 2`: a block that
 * prints an exit code must have its output shown, so that a wrong code fails the test.
 */

export type Mark = "background" | "postgres" | "root" | "ci-run";
export const MARKS: readonly Mark[] = ["background", "postgres", "root", "ci-run"];

export interface GuideBlock {
  readonly file: string;
  /** The line of the opening fence (1-based). */
  readonly line: number;
  /** The fence's info string: `sh root`, `toml`, "" … */
  readonly info: string;
  readonly marks: readonly string[];
  readonly code: string;
  /** Whether only blank lines separate it from the block before it. */
  readonly rightAfterBlock: boolean;
}

/** Every fenced block of a Markdown text; a fence's indentation is taken off its lines. */
export function fencedBlocks(markdown: string, file: string): GuideBlock[] {
  const lines = markdown.split("\n");
  const blocks: GuideBlock[] = [];
  let lastEnd = -2;
  for (let index = 0; index < lines.length; index++) {
    const open = /^(\s*)(```+)(.*)$/.exec(lines[index] as string);
    if (!open) continue;
    const [, indent, fence, info] = open as unknown as [string, string, string, string];
    const body: string[] = [];
    let end = index + 1;
    while (end < lines.length && !new RegExp(`^\\s*${fence}\\s*$`).test(lines[end] as string)) {
      body.push((lines[end] as string).startsWith(indent) ? (lines[end] as string).slice(indent.length) : (lines[end] as string));
      end++;
    }
    const words = info.trim().split(/\s+/).filter((word) => word !== "");
    const rightAfterBlock = lastEnd >= 0 && lines.slice(lastEnd + 1, index).every((text) => text.trim() === "");
    blocks.push({ file, line: index + 1, info: info.trim(), marks: words.slice(1), code: body.join("\n"), rightAfterBlock });
    index = end;
    lastEnd = end;
  }
  return blocks;
}

export const isShell = (block: GuideBlock) => block.info.split(/\s+/)[0] === "sh";

/** A ```text output block: what the ```sh block right before it prints. */
export const isShownOutput = (block: GuideBlock) => block.info === "text output";

/** The output shown right after each ```sh block of `blocks` (one file's, in order), by the block's line. */
export function shownOutputs(blocks: readonly GuideBlock[]): Map<number, string> {
  const shown = new Map<number, string>();
  blocks.forEach((block, index) => {
    const before = blocks[index - 1];
    if (isShownOutput(block) && block.rightAfterBlock && before && isShell(before)) shown.set(before.line, block.code);
  });
  return shown;
}

/** The lines of `shown` that `printed` does not match (`…` matches any run of characters within a line), as a diff; "" when all match. */
export function outputDifference(printed: string, shown: string): string {
  const actual = printed.trimEnd().split("\n");
  const wanted = shown.trimEnd().split("\n");
  const matches = (line: string, pattern: string) =>
    new RegExp(`^${pattern.split("…").map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(line);
  const differences: string[] = [];
  for (let index = 0; index < Math.max(actual.length, wanted.length); index++) {
    const [line, pattern] = [actual[index], wanted[index]];
    if (line === undefined || pattern === undefined || !matches(line, pattern)) {
      differences.push(`line ${index + 1}:\n- shown:   ${pattern ?? "(nothing)"}\n+ printed: ${line ?? "(nothing)"}`);
    }
  }
  return [...differences.slice(0, 10), ...(differences.length > 10 ? [`… and ${differences.length - 10} lines more`] : [])].join("\n");
}

/** Fences that hold something other than commands. */
export const NOT_COMMANDS = new Set(["toml", "ini", "nginx", "json", "yaml", "text", "caddyfile", "http", "sql", "ts"]);

/**
 * A bash script that runs `blocks` in order in one shell, so a variable set in one block
 * is there in the next. Each block announces itself on stderr (`::block FILE:LINE`), so a
 * failure names the block. Background blocks run in a process group of their own,
 * stopped with SIGTERM when the script ends. A block whose line is in `captured` prints
 * to `output-LINE.txt` (stdout and stderr, as a terminal would show them) instead.
 */
export function scriptFor(blocks: readonly GuideBlock[], options: { healthUrl?: string; captured?: ReadonlySet<number> } = {}): string {
  const parts = [
    "set -euo pipefail",
    "set -m",
    "__background=()",
    `__stop() { for pid in "\${__background[@]}"; do kill -TERM -- "-$pid" 2>/dev/null || true; done; for pid in "\${__background[@]}"; do while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done; done; }`,
    "trap __stop EXIT",
  ];
  for (const block of blocks) {
    parts.push(`echo "::block ${block.file}:${block.line}" >&2`);
    if (block.marks.includes("background")) {
      parts.push(`( ${block.code}\n) > "background-${block.line}.log" 2>&1 &`, "__background+=($!)");
      if (options.healthUrl) {
        // Plain HTTP, or HTTPS for a server started with a certificate of its own.
        const answers = `{ curl -sf -o /dev/null ${options.healthUrl} || curl -sfk -o /dev/null ${options.healthUrl.replace(/^http:/, "https:")}; }`;
        parts.push(
          `for __try in $(seq 1 240); do ${answers} && break; sleep 0.25; done`,
          `${answers} || { echo "the background block of ${block.file}:${block.line} did not answer ${options.healthUrl}" >&2; cat "background-${block.line}.log" >&2; exit 1; }`,
        );
      }
    } else if (options.captured?.has(block.line)) {
      parts.push(`{ ${block.code}\n} > "output-${block.line}.txt" 2>&1`);
    } else {
      parts.push(block.code);
    }
  }
  parts.push('echo "::end" >&2');
  return `${parts.join("\n")}\n`;
}
