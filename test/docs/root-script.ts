/**
 * Prints the script of the guides' ```sh root blocks, for .ci/docs-root.sh: the install
 * guide first (it installs the package the others use), then the rest in name order.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fencedBlocks, isShell } from "./guide-blocks.ts";
import { scriptFor } from "./guide-blocks.ts";

const root = join(import.meta.dir, "..", "..");
const names = readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).sort();
const ordered = ["install.md", ...names.filter((name) => name !== "install.md")];
const blocks = ["README.md", ...ordered.map((name) => `docs/${name}`)].flatMap((file) =>
  fencedBlocks(readFileSync(join(root, file), "utf8"), file).filter((block) => isShell(block) && block.marks.includes("root")),
);
process.stdout.write(scriptFor(blocks));
