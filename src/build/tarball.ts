/**
 * The release's .tar.gz: one folder, iplookup-VERSION-TARGET/, holding the binary, the
 * licence, the data's attribution, the third-party notices (THIRD-PARTY-NOTICES), the .deb's systemd unit and configuration file
 * (packaging/, as install.md's "The executable alone" names them, for a unit of one's
 * own), and the README with the guides and the hosting list it links to
 * (shipped-docs.ts), where the links find them. Written with GNU tar in name order,
 * owned by 0:0, every time set to the release's epoch, and gzip without a name or time,
 * so the same inputs give the same bytes.
 */
import { chmodSync, copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { clampTimes, runTool } from "./run-tool.ts";
import { NOTICES_FILE } from "./sbom.ts";
import { shippedDocs } from "./shipped-docs.ts";

export function writeTarball(options: {
  root: string;
  binary: string;
  /** THIRD-PARTY-NOTICES (notices.ts), shipped under that name. */
  notices: string;
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
  const place = (from: string, to: string) => {
    mkdirSync(dirname(join(stage, to)), { recursive: true });
    copyFileSync(from, join(stage, to));
    chmodSync(join(stage, to), 0o644);
  };
  place(join(options.root, "packaging", "LICENSE"), "LICENSE");
  place(join(options.root, "packaging", "DATA-LICENSES.md"), "DATA-LICENSES.md");
  place(options.notices, NOTICES_FILE);
  for (const file of ["iplookup.service", "iplookup.toml"]) place(join(options.root, "packaging", file), join("packaging", file));
  for (const file of shippedDocs(options.root)) place(join(options.root, file), file);
  for (const entry of readdirSync(stage, { recursive: true, withFileTypes: true })) if (entry.isDirectory()) chmodSync(join(entry.parentPath, entry.name), 0o755);
  chmodSync(stage, 0o755);
  clampTimes(stage, options.epoch);
  const tar = join(options.workDir, `${options.folderName}.tar`);
  runTool(["tar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner", "--format=gnu", `--mtime=@${options.epoch}`, "-cf", tar, options.folderName], { cwd: options.workDir });
  runTool(["gzip", "-6", "-n", "-f", tar]);
  runTool(["mv", `${tar}.gz`, options.outfile]);
  rmSync(stage, { recursive: true, force: true });
}
