/**
 * A CycloneDX 1.5 SBOM (JSON) of what the binary ships: the npm packages whose files the
 * bundle holds (found from `bun build --metafile`, so a package that ships without
 * being listed is named too), the Bun runtime the executable is built on, and the data
 * packages whose data it embeds, each with its version and licence.
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
        description: "The runtime the executable is compiled on (bun build --compile); it carries the libraries Bun links, listed in Bun's own licence notices.",
        licenses: licenses("MIT"),
        purl: purl("bun", options.bunVersion),
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
