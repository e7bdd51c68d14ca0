/**
 * A CycloneDX 1.5 SBOM (JSON) of what the binary ships: the npm packages whose files the
 * bundle holds (found from `bun build --metafile`, so a package that ships without
 * being listed is named too), the Bun runtime the executable is built on, and the data
 * packages whose data it embeds, each with its version and licence. The bun entry points at
 * THIRD-PARTY-NOTICES (notices.ts) and Bun's own LICENSE.md for what Bun links.
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { runTool } from "./run-tool.ts";

export interface ShippedPackage {
  readonly name: string;
  readonly version: string;
  readonly license: string;
}

/** The packages under node_modules that a metafile's inputs come from, sorted. */
export function bundledPackageNames(metafile: { inputs: Record<string, unknown> }): string[] {
  const names = new Set<string>();
  for (const input of Object.keys(metafile.inputs)) {
    const at = input.lastIndexOf("node_modules/");
    if (at < 0) continue;
    const [first, second] = input.slice(at + "node_modules/".length).split("/");
    names.add(first?.startsWith("@") ? `${first}/${second}` : (first as string));
  }
  return [...names].sort();
}

/** The npm packages the executable's bundle holds: a bundle with a metafile, in `workDir`, then removed. */
export function bundledPackages(root: string, workDir: string): string[] {
  const entries = [join(root, "src/main-binary.ts"), join(root, "src/serve/worker-thread.ts")];
  runTool([process.execPath, "build", ...entries, "--target=bun", "--outdir", workDir, `--metafile=${join(workDir, "meta.json")}`], { cwd: root });
  try {
    return bundledPackageNames(JSON.parse(readFileSync(join(workDir, "meta.json"), "utf8")));
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
}

interface PackageJson {
  readonly dependencies: Record<string, string>;
  readonly devDependencies: Record<string, string>;
}

/**
 * The npm packages the executable ships, for the SBOM and THIRD-PARTY-NOTICES alike: those
 * the bundle holds and every dependency, sorted; refused if the bundle holds a
 * devDependency (the tests' oracle, say), which must never ship. `unused`: the
 * dependencies the bundle does not hold.
 */
export function shippedLibraries(root: string, workDir: string): { names: string[]; unused: string[] } {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as PackageJson;
  const bundled = bundledPackages(root, workDir);
  const devOnly = bundled.filter((name) => name in pkg.devDependencies && !(name in pkg.dependencies));
  if (devOnly.length > 0) throw new Error(`the binary bundles ${devOnly.join(", ")}, listed in devDependencies only: move it to dependencies, or stop importing it from src/`);
  return {
    names: [...new Set([...bundled, ...Object.keys(pkg.dependencies)])].sort(),
    unused: Object.keys(pkg.dependencies).filter((name) => !bundled.includes(name)),
  };
}

/** A package's name, version and licence, from its package.json in node_modules. */
export function describePackage(root: string, name: string): ShippedPackage {
  const pkg = JSON.parse(readFileSync(join(root, "node_modules", name, "package.json"), "utf8")) as { version: string; license?: string | { type?: string } };
  const license = typeof pkg.license === "string" ? pkg.license : (pkg.license?.type ?? "NOASSERTION");
  return { name, version: pkg.version, license };
}

/** The data packages the default data file is built from, and the licence each is under. */
export const DATA_PACKAGE_LICENSES: Readonly<Record<string, { readonly license: string; readonly attribution: string }>> = {
  "@ip-location-db/asn": { license: "CC-BY-4.0", attribution: "RouteViews (routeviews.org), DB-IP (db-ip.com: IP to ASN Lite) and the NRO (nro.net), CC BY 4.0" },
  "@ip-location-db/geo-whois-asn-country": { license: "CC0-1.0", attribution: "CC0 1.0" },
};

/** The notices file the tarball and the .deb ship (notices.ts), as the SBOM names it. */
export const NOTICES_FILE = "THIRD-PARTY-NOTICES";

const SPDX_ID = /^[A-Za-z0-9.+-]+$/;

function licenses(license: string): unknown[] {
  return [SPDX_ID.test(license) ? { license: { id: license } } : { license: { name: license } }];
}

function purl(name: string, version: string): string {
  const [scope, bare] = name.startsWith("@") ? name.split("/") : [null, name];
  return `pkg:npm/${scope ? `${encodeURIComponent(scope)}/` : ""}${bare}@${version}`;
}

export function cycloneDx(options: {
  version: string;
  timestamp: string;
  libraries: readonly ShippedPackage[];
  data: readonly ShippedPackage[];
  bunVersion: string;
}): Record<string, unknown> {
  const component = (pkg: ShippedPackage, type: string) => ({
    type,
    "bom-ref": purl(pkg.name, pkg.version),
    name: pkg.name,
    version: pkg.version,
    licenses: licenses(pkg.license),
    purl: purl(pkg.name, pkg.version),
  });
  return {
    bomFormat: "CycloneDX",
    specVersion: "1.5",
    version: 1,
    metadata: {
      timestamp: options.timestamp,
      component: { type: "application", "bom-ref": "iplookup", name: "iplookup", version: options.version, licenses: licenses("MIT") },
    },
    components: [
      {
        type: "platform",
        "bom-ref": purl("bun", options.bunVersion),
        name: "bun",
        version: options.bunVersion,
        description:
          "The runtime the executable is compiled on (bun build --compile). Bun is MIT; it links JavaScriptCore and WebKit (LGPL-2) and other libraries statically, " +
          `named with their licences in ${NOTICES_FILE}, which ships beside the executable (the tarball; /usr/share/doc/iplookup in the .deb). Full text: Bun's LICENSE.md at its release tag.`,
        licenses: [{ license: { id: "MIT" } }, { license: { name: "LGPL-2.0 (JavaScriptCore and WebKit, linked statically)" } }],
        purl: purl("bun", options.bunVersion),
        externalReferences: [
          { type: "license", url: `https://github.com/oven-sh/bun/blob/bun-v${options.bunVersion}/LICENSE.md`, comment: "Bun's licence notice: Bun, JavaScriptCore, WebKit and the libraries Bun links" },
          { type: "vcs", url: "https://github.com/oven-sh/webkit", comment: "The WebKit Bun links, with Bun's changes (LGPL-2: to link Bun again with a changed copy)" },
        ],
      },
      ...options.libraries.map((pkg) => component(pkg, "library")),
      // A data package's own licence field may only point at its files ("SEE LICENSE IN …"):
      // the licence is the one this project has read there.
      ...options.data.map((pkg) => ({
        ...component({ ...pkg, license: DATA_PACKAGE_LICENSES[pkg.name]?.license ?? pkg.license }, "data"),
        description: `Embedded in the default data file: ${DATA_PACKAGE_LICENSES[pkg.name]?.attribution ?? pkg.license}`,
      })),
    ],
  };
}
