/**
 * The release's .deb, built with dpkg-deb from packaging/: /usr/bin/iplookup, the
 * systemd unit (/lib/systemd/system, where Debian 12's systemd and lintian look), the
 * configuration /etc/iplookup/iplookup.toml (a conffile: dpkg keeps an operator's edits
 * on upgrade), the docs (shipped-docs.ts), the copyright file (the Bun version it
 * names filled in) and the third-party notices (THIRD-PARTY-NOTICES) in
 * /usr/share/doc/iplookup, and lintian's overrides. The maintainer scripts reload
 * systemd and restart the service on upgrade only if it runs; nothing is enabled or
 * started. Files are owned by root, their times set to the release's epoch, so the same
 * inputs give the same bytes.
 */
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { dirname, join, relative } from "node:path";
import { clampTimes, runTool } from "./run-tool.ts";
import { NOTICES_FILE } from "./sbom.ts";
import { shippedDocs } from "./shipped-docs.ts";

export interface DebOptions {
  readonly root: string;
  readonly binary: string;
  /** THIRD-PARTY-NOTICES (notices.ts), shipped in /usr/share/doc/iplookup under that name. */
  readonly notices: string;
  readonly version: string;
  readonly arch: string;
  readonly outfile: string;
  readonly workDir: string;
  readonly epoch: number;
  /** dpkg-deb's compression level (gzip); 6 for a release (gzip -9 is 0.3% smaller and takes 2.6 times as long), lower for tests. */
  readonly level?: number;
}

const PACKAGING = (root: string) => join(root, "packaging");

function place(from: string, to: string, mode: number): void {
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
  chmodSync(to, mode);
}

function fill(template: string, values: Record<string, string>): string {
  return template.replace(/@([A-Z_]+)@/g, (whole, key: string) => values[key] ?? whole);
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
}

/** RFC 5322 date of the epoch, as a Debian changelog's trailer line wants it. */
function changelogDate(epoch: number): string {
  return new Date(epoch * 1000).toUTCString().replace("GMT", "+0000");
}

export function writeDeb(options: DebOptions): void {
  const stage = join(options.workDir, `deb-${options.arch}`);
  rmSync(stage, { recursive: true, force: true });
  const pkg = PACKAGING(options.root);
  const doc = join(stage, "usr/share/doc/iplookup");

  place(options.binary, join(stage, "usr/bin/iplookup"), 0o755);
  place(join(pkg, "iplookup.service"), join(stage, "lib/systemd/system/iplookup.service"), 0o644);
  place(join(pkg, "iplookup.toml"), join(stage, "etc/iplookup/iplookup.toml"), 0o644);
  mkdirSync(doc, { recursive: true });
  writeFileSync(join(doc, "copyright"), fill(readFileSync(join(pkg, "debian/copyright"), "utf8"), { BUN_VERSION: Bun.version }));
  chmodSync(join(doc, "copyright"), 0o644);
  place(options.notices, join(doc, NOTICES_FILE), 0o644);
  place(join(pkg, "debian/lintian-overrides"), join(stage, "usr/share/lintian/overrides/iplookup"), 0o644);
  for (const file of shippedDocs(options.root)) place(join(options.root, file), join(doc, file), 0o644);
  mkdirSync(join(stage, "usr/share/man/man1"), { recursive: true });
  writeFileSync(join(stage, "usr/share/man/man1/iplookup.1"), fill(readFileSync(join(pkg, "iplookup.1"), "utf8"), { VERSION: options.version }));
  runTool(["gzip", "-9", "-n", join(stage, "usr/share/man/man1/iplookup.1")]);
  writeFileSync(join(doc, "changelog"), fill(readFileSync(join(pkg, "debian/changelog"), "utf8"), { VERSION: options.version, DATE: changelogDate(options.epoch) }));
  runTool(["gzip", "-9", "-n", join(doc, "changelog")]);

  const control = join(stage, "DEBIAN");
  mkdirSync(control, { recursive: true });
  const payload = filesUnder(stage).filter((file) => !file.startsWith(`${control}/`));
  const installedKiB = payload.reduce((sum, file) => sum + Math.ceil(statSync(file).size / 1024), 0);
  writeFileSync(
    join(control, "control"),
    fill(readFileSync(join(pkg, "debian/control"), "utf8"), { VERSION: options.version, ARCH: options.arch, INSTALLED_SIZE: String(installedKiB) }),
  );
  place(join(pkg, "debian/conffiles"), join(control, "conffiles"), 0o644);
  for (const script of ["postinst", "prerm", "postrm"]) place(join(pkg, "debian", script), join(control, script), 0o755);
  const md5sums = payload
    .filter((file) => !file.startsWith(join(stage, "etc") + "/"))
    .map((file) => `${createHash("md5").update(readFileSync(file)).digest("hex")}  ${relative(stage, file)}`)
    .join("\n");
  writeFileSync(join(control, "md5sums"), `${md5sums}\n`);
  chmodSync(join(control, "control"), 0o644);
  chmodSync(join(control, "md5sums"), 0o644);
  for (const dir of readdirSync(stage, { recursive: true, withFileTypes: true }).filter((entry) => entry.isDirectory())) chmodSync(join(dir.parentPath, dir.name), 0o755);
  chmodSync(stage, 0o755);
  clampTimes(stage, options.epoch);
  runTool(["dpkg-deb", "--root-owner-group", `-Zgzip`, `-z${options.level ?? 6}`, "--build", stage, options.outfile], {
    env: { ...process.env, SOURCE_DATE_EPOCH: String(options.epoch) },
  });
  rmSync(stage, { recursive: true, force: true });
}
