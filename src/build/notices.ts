/**
 * THIRD-PARTY-NOTICES, which the tarball and the .deb ship beside the executable: the
 * notices the licences of what it carries ask to travel with it. The Bun runtime's
 * (packaging/bun-notice.txt, a summary of Bun's LICENSE.md that points at it, at the
 * tag of the Bun version the executable is compiled on),
 * then each npm package the bundle holds, the same list as the SBOM's, with the text of
 * its own licence file from node_modules. The data set's licences are in
 * DATA-LICENSES.md (the tarball) and the copyright file (the .deb).
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describePackage } from "./sbom.ts";

/** A package's licence file: LICENSE, LICENCE, COPYING, with or without .md or .txt, in any case. */
const LICENSE_FILE = /^(licen[cs]e|copying)(\.(md|txt))?$/i;

/** The text of a package's licence file in node_modules; throws when it has none. */
export function licenseText(root: string, name: string): string {
  const dir = join(root, "node_modules", name);
  const file = readdirSync(dir).filter((entry) => LICENSE_FILE.test(entry)).sort()[0];
  if (!file) throw new Error(`${name} ships no licence file (LICENSE, COPYING, …) in ${dir}: its notice cannot travel with the binary`);
  return readFileSync(join(dir, file), "utf8").replace(/\r\n/g, "\n").trim();
}

function heading(text: string, underline: string): string {
  return `${text}\n${underline.repeat(text.length)}`;
}

export function thirdPartyNotices(options: { root: string; version: string; libraries: readonly string[]; bunVersion: string }): string {
  const packages = [...options.libraries].sort().map((name) => describePackage(options.root, name));
  const bun = readFileSync(join(options.root, "packaging", "bun-notice.txt"), "utf8").replaceAll("@BUN_VERSION@", options.bunVersion).trim();
  const width = Math.max(...packages.map((pkg) => `${pkg.name} ${pkg.version}`.length));
  return [
    heading(`Third-party notices for iplookup ${options.version}`, "="),
    [
      "The iplookup executable holds iplookup's own code (MIT: LICENSE, or the copyright",
      "file of the .deb), the default IP data set (DATA-LICENSES.md, or the copyright",
      "file), and the works below, each under its own licence: the Bun runtime it is",
      "compiled on, and the npm packages its code is bundled with.",
    ].join("\n"),
    heading(`The Bun runtime, version ${options.bunVersion}`, "-"),
    bun,
    heading(`npm packages bundled into the executable (${packages.length})`, "-"),
    packages.map((pkg) => `  ${`${pkg.name} ${pkg.version}`.padEnd(width)}  ${pkg.license}`).join("\n"),
    ...packages.map((pkg) => `${heading(`${pkg.name} ${pkg.version} (${pkg.license})`, "~")}\n\n${licenseText(options.root, pkg.name)}`),
  ].join("\n\n").concat("\n");
}

export function writeThirdPartyNotices(outfile: string, options: Parameters<typeof thirdPartyNotices>[0]): void {
  writeFileSync(outfile, thirdPartyNotices(options));
}
