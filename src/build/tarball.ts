/**
 * The release's .tar.gz: one folder, iplookup-VERSION-TARGET/, holding the binary, the
 * README, the licence and the data's attribution. Written with GNU tar in name order,
 * owned by 0:0, every time set to the release's epoch, and gzip without a name or time,
 * so the same inputs give the same bytes.
 */
import { chmodSync, copyFileSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { clampTimes, runTool } from "./run-tool.ts";

export function writeTarball(options: {
  root: string;
  binary: string;
  folderName: string;
  outfile: string;
  workDir: string;
  epoch: number;
}): void {
  const stage = join(options.workDir, options.folderName);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  copyFileSync(options.binary, join(stage, "iplookup"));
  chmodSync(join(stage, "iplookup"), 0o755);
  copyFileSync(join(options.root, "README.md"), join(stage, "README.md"));
  copyFileSync(join(options.root, "packaging", "LICENSE"), join(stage, "LICENSE"));
  copyFileSync(join(options.root, "packaging", "DATA-LICENSES.md"), join(stage, "DATA-LICENSES.md"));
  for (const file of ["README.md", "LICENSE", "DATA-LICENSES.md"]) chmodSync(join(stage, file), 0o644);
  chmodSync(stage, 0o755);
  clampTimes(stage, options.epoch);
  const tar = join(options.workDir, `${options.folderName}.tar`);
  runTool(["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--format=gnu", `--mtime=@${options.epoch}`, "-cf", tar, options.folderName], { cwd: options.workDir });
  runTool(["gzip", "-6", "-n", "-f", tar]);
  runTool(["mv", `${tar}.gz`, options.outfile]);
  rmSync(stage, { recursive: true, force: true });
}
