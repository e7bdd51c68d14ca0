/**
 * `bun run release`: the release artefacts, in dist/ (CONTRACT §17), for every target
 * (or those named by --targets linux-x64,linux-arm64):
 *
 *   iplookup-VERSION-linux-x64             the executable (its default data embedded)
 *   iplookup-VERSION-linux-x64.tar.gz      the executable, licences and third-party notices, unit and config, README, guides
 *   iplookup_VERSION_amd64.deb             the Debian package (deb.ts)
 *   … the same for linux-arm64 / arm64
 *   iplookup-VERSION.cdx.json              CycloneDX SBOM of what the executable ships
 *   SHA256SUMS                             sha256sum's format, of every file above
 *
 * Reproducible where Bun allows: the build date every artefact carries is the commit's
 * time (SOURCE_DATE_EPOCH, when set, wins), the default data file is built with that
 * time, and archives are written in name order with clamped times and owners. Bun's
 * compiled executable holds its output file's name (so each is compiled as "iplookup"
 * in a folder of its own) and is otherwise the same bytes from the same inputs.
 */
import { copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { buildDefaultDataFile } from "../importer/build-default.ts";
import { compile } from "./compile.ts";
import { writeDeb } from "./deb.ts";
import { writeThirdPartyNotices } from "./notices.ts";
import { cycloneDx, DATA_PACKAGE_LICENSES, describePackage, NOTICES_FILE, shippedLibraries } from "./sbom.ts";
import { writeTarball } from "./tarball.ts";
import { RELEASE_TARGETS, type ReleaseTarget } from "./targets.ts";

const root = join(import.meta.dir, "..", "..");

interface PackageJson {
  version: string;
}

/** The release's epoch: SOURCE_DATE_EPOCH, else the commit's time, else now. */
export function releaseEpoch(env: Readonly<Record<string, string | undefined>>): number {
  if (env.SOURCE_DATE_EPOCH && /^[0-9]+$/.test(env.SOURCE_DATE_EPOCH)) return Number(env.SOURCE_DATE_EPOCH);
  const git = Bun.spawnSync(["git", "log", "-1", "--format=%ct"], { cwd: root, stdout: "pipe", stderr: "pipe" });
  const committed = git.stdout.toString().trim();
  return git.exitCode === 0 && /^[0-9]+$/.test(committed) ? Number(committed) : Math.floor(Date.now() / 1000);
}

/** The default data file, built with the release's time so that its bytes follow the commit. */
async function buildReleaseData(epoch: number): Promise<void> {
  await buildDefaultDataFile(join(root, "data", "iplookup-data.db"), { force: true, builtAt: new Date(epoch * 1000) });
}

/** The SBOM of the npm packages the executable ships (shippedLibraries), the data packages and Bun. */
function writeSbom(pkg: PackageJson, libraries: readonly string[], outfile: string, epoch: number): void {
  const sbom = cycloneDx({
    version: pkg.version,
    timestamp: new Date(epoch * 1000).toISOString().replace(/\.\d{3}Z$/, "Z"),
    libraries: libraries.map((name) => describePackage(root, name)),
    data: Object.keys(DATA_PACKAGE_LICENSES).map((name) => describePackage(root, name)),
    bunVersion: Bun.version,
  });
  writeFileSync(outfile, `${JSON.stringify(sbom, null, 2)}\n`);
}

function sha256(path: string): string {
  return new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");
}

export async function release(options: { targets: readonly ReleaseTarget[]; outDir: string; debLevel?: number }): Promise<string[]> {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageJson;
  const epoch = releaseEpoch(process.env);
  const env = { ...process.env, SOURCE_DATE_EPOCH: String(epoch) };
  const work = join(options.outDir, "build");
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  await buildReleaseData(epoch);
  const artefacts: string[] = [];
  const sbom = join(options.outDir, `iplookup-${pkg.version}.cdx.json`);
  const libraries = shippedLibraries(root, join(work, "metafile"));
  if (libraries.unused.length > 0) console.warn(`note: ${libraries.unused.join(", ")} in dependencies but not in the bundle`);
  writeSbom(pkg, libraries.names, sbom, epoch);
  // One file for every target: the tarballs and the .debs ship it.
  const notices = join(work, NOTICES_FILE);
  writeThirdPartyNotices(notices, { root, version: pkg.version, libraries: libraries.names, bunVersion: Bun.version });
  for (const target of options.targets) {
    const compiled = join(work, target.name, "iplookup");
    compile(compiled, target.bunTarget, env);
    const binary = join(options.outDir, `iplookup-${pkg.version}-${target.name}`);
    copyFileSync(compiled, binary);
    artefacts.push(binary);
    const tarball = `${binary}.tar.gz`;
    writeTarball({ root, binary: compiled, notices, folderName: `iplookup-${pkg.version}-${target.name}`, outfile: tarball, workDir: work, epoch });
    artefacts.push(tarball);
    const deb = join(options.outDir, `iplookup_${pkg.version}_${target.debArch}.deb`);
    writeDeb({ root, binary: compiled, notices, version: pkg.version, arch: target.debArch, outfile: deb, workDir: work, epoch, level: options.debLevel });
    artefacts.push(deb);
  }
  artefacts.push(sbom);
  const sums = artefacts.map((file) => `${sha256(file)}  ${file.slice(options.outDir.length + 1)}`).join("\n");
  writeFileSync(join(options.outDir, "SHA256SUMS"), `${sums}\n`);
  rmSync(work, { recursive: true, force: true });
  return [...artefacts, join(options.outDir, "SHA256SUMS")];
}

if (import.meta.main) {
  const { values } = parseArgs({ args: process.argv.slice(2), options: { targets: { type: "string" }, out: { type: "string" } } });
  const wanted = values.targets?.split(",") ?? RELEASE_TARGETS.map((target) => target.name);
  const targets = wanted.map((name) => {
    const target = RELEASE_TARGETS.find((candidate) => candidate.name === name);
    if (!target) {
      console.error(`--targets: "${name}" is not one of ${RELEASE_TARGETS.map((candidate) => candidate.name).join(", ")}`);
      process.exit(2);
    }
    return target;
  });
  const outDir = values.out ?? join(root, "dist");
  mkdirSync(outDir, { recursive: true });
  const began = performance.now();
  try {
    const files = await release({ targets, outDir });
    for (const file of files) console.log(`${file}  ${(statSync(file).size / 1024 / 1024).toFixed(1)} MiB`);
    console.log(`release built in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  } catch (error) {
    console.error(`release failed: ${(error as Error).message}`);
    process.exit(1);
  }
}
