// What the release ships besides the binary: the SBOM's list of packages, the
// third-party notices and the copyright file, the default configuration file, the systemd unit (checked with systemd-analyze where it is
// installed; CI installs it), and the docs of the tarball and the .deb, whose links
// must find what they link to.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, normalize } from "node:path";
import { writeDeb } from "../../src/build/deb.ts";
import { runTool } from "../../src/build/run-tool.ts";
import { writeTarball } from "../../src/build/tarball.ts";
import { licenseText, writeThirdPartyNotices } from "../../src/build/notices.ts";
import { bundledPackages, cycloneDx, DATA_PACKAGE_LICENSES, describePackage, shippedLibraries } from "../../src/build/sbom.ts";
import { parseConfigText } from "../../src/config/config-file.ts";
import { readServeConfig, SERVE_SETTING_NAMES } from "../../src/config/serve-config.ts";

const root = join(import.meta.dir, "..", "..");
const dir = mkdtempSync(join(tmpdir(), "iplookup-packaging-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { dependencies: Record<string, string>; devDependencies: Record<string, string> };

describe("the SBOM", () => {
  test("names every package the bundle holds, every dependency, and no devDependency", () => {
    const shipped = bundledPackages(root, join(dir, "meta"));
    for (const name of ["elysia", "@sinclair/typebox", "fflate", "modern-tar", "uplot"]) expect(shipped).toContain(name);
    // The tests' oracles never ship.
    for (const name of ["mmdb-lib", "ipaddr.js", "fast-check", "playwright-core"]) expect(shipped).not.toContain(name);
    for (const name of shipped) expect(name in pkg.devDependencies && !(name in pkg.dependencies)).toBe(false);
    for (const name of Object.keys(pkg.dependencies)) expect(shipped).toContain(name);
  }, 60_000);

  test("is CycloneDX 1.5 with versions and licences, the data packages among them", () => {
    const libraries = ["elysia", "fflate"].map((name) => describePackage(root, name));
    const data = Object.keys(DATA_PACKAGE_LICENSES).map((name) => describePackage(root, name));
    const sbom = cycloneDx({ version: "0.1.0", timestamp: "2026-11-25T00:00:00Z", libraries, data, bunVersion: Bun.version }) as {
      bomFormat: string;
      specVersion: string;
      components: Array<{ type: string; name: string; version: string; purl: string; licenses: Array<{ license: { id?: string; name?: string } }> }>;
    };
    expect(sbom.bomFormat).toBe("CycloneDX");
    expect(sbom.specVersion).toBe("1.5");
    const byName = new Map(sbom.components.map((component) => [component.name, component]));
    expect(byName.get("elysia")).toMatchObject({ type: "library", version: pkg.dependencies.elysia, purl: `pkg:npm/elysia@${pkg.dependencies.elysia}`, licenses: [{ license: { id: "MIT" } }] });
    expect(byName.get("@ip-location-db/asn")).toMatchObject({ type: "data", purl: expect.stringMatching(/^pkg:npm\/%40ip-location-db\/asn@2\./), licenses: [{ license: { id: "CC-BY-4.0" } }] });
    expect(byName.get("@ip-location-db/geo-whois-asn-country")).toMatchObject({ type: "data", licenses: [{ license: { id: "CC0-1.0" } }] });
    expect(byName.get("bun")).toMatchObject({ type: "platform", version: Bun.version });
  });

  test("its bun entry names JavaScriptCore's LGPL-2 and points at the notices shipped and at Bun's LICENSE.md of that version", () => {
    const sbom = cycloneDx({ version: "0.1.0", timestamp: "2026-11-25T00:00:00Z", libraries: [], data: [], bunVersion: "1.4.4" }) as {
      components: Array<{ name: string; description: string; licenses: unknown[]; externalReferences: Array<{ type: string; url: string }> }>;
    };
    const bun = sbom.components.find((component) => component.name === "bun");
    expect(bun?.licenses).toEqual([{ license: { id: "MIT" } }, { license: { name: expect.stringContaining("LGPL-2") } }]);
    expect(bun?.description).toContain("THIRD-PARTY-NOTICES");
    expect(bun?.description).toContain("/usr/share/doc/iplookup");
    expect(bun?.externalReferences).toContainEqual(expect.objectContaining({ type: "license", url: "https://github.com/oven-sh/bun/blob/bun-v1.4.4/LICENSE.md" }));
  });
});

/**
 * THIRD-PARTY-NOTICES as the release writes it: for the packages the SBOM lists
 * (shippedLibraries), made once for the tests below.
 */
let made: { path: string; libraries: string[] } | null = null;
function notices(): { path: string; libraries: string[] } {
  if (!made) {
    const libraries = shippedLibraries(root, join(dir, "notices-meta")).names;
    const path = join(dir, "THIRD-PARTY-NOTICES");
    writeThirdPartyNotices(path, { root, version: "0.0.1", libraries, bunVersion: Bun.version });
    made = { path, libraries };
  }
  return made;
}

/** The shipped packages `text` does not name with their version and licence, or whose licence file's text it lacks. */
function missingNotices(text: string, libraries: readonly string[]): string[] {
  return libraries.filter((name) => {
    const pkg = describePackage(root, name);
    return !text.includes(`${pkg.name} ${pkg.version} (${pkg.license})`) || !text.includes(licenseText(root, name));
  });
}

describe("THIRD-PARTY-NOTICES", () => {
  test("Bun's notice (JavaScriptCore and WebKit under LGPL-2, where to relink, the libraries it links), then every shipped package's licence", () => {
    const { path, libraries } = notices();
    const text = readFileSync(path, "utf8");
    expect(text).toContain(`The Bun runtime, version ${Bun.version}`);
    expect(text).toContain(`https://github.com/oven-sh/bun/blob/bun-v${Bun.version}/LICENSE.md`);
    for (const words of ["JavaScriptCore", "LGPL-2", "https://github.com/oven-sh/webkit", "boringssl", "tinycc", "LGPL-2.1", "zlib-ng", "esbuild"]) expect(text).toContain(words);
    expect(text).not.toContain("@BUN_VERSION@");
    // The same list as the SBOM's, each with its own licence text: ieee754's BSD-3-Clause too.
    for (const name of ["elysia", "@sinclair/typebox", "fflate", "modern-tar", "uplot", "ieee754"]) expect(libraries).toContain(name);
    expect(missingNotices(text, libraries)).toEqual([]);
    expect(text).toContain("Copyright 2008 Fair Oaks Labs, Inc.");
  }, 60_000);

  test("a package without a licence file stops the release, naming it", () => {
    const fake = join(dir, "fake-root");
    mkdirSync(join(fake, "node_modules", "no-licence"), { recursive: true });
    writeFileSync(join(fake, "node_modules", "no-licence", "package.json"), JSON.stringify({ name: "no-licence", version: "1.0.0", license: "MIT" }));
    expect(() => licenseText(fake, "no-licence")).toThrow("no-licence ships no licence file");
  });
});

describe("the default configuration file", () => {
  const text = readFileSync(join(root, "packaging/iplookup.toml"), "utf8");

  test("is valid, and sets the state in the unit's state directory", () => {
    const file = parseConfigText(text, "/etc/iplookup/iplookup.toml", SERVE_SETTING_NAMES);
    expect([...file.values.keys()]).toEqual(["state"]);
    const path = join(dir, "default.toml");
    writeFileSync(path, text);
    expect(readServeConfig({ config: path }, {}).statePath).toBe("/var/lib/iplookup/state.db");
  });

  test("every setting it shows commented out is valid once uncommented", () => {
    const commented = text.split("\n").filter((line) => /^# [a-z-]+ = /.test(line));
    expect(commented.length).toBeGreaterThanOrEqual(12);
    const path = join(dir, "uncommented.toml");
    writeFileSync(path, commented.map((line) => line.slice(2)).join("\n"));
    const config = readServeConfig({ config: path }, {});
    expect(config).toMatchObject({ port: 8080, host: "::", adminPort: 8081, updateEvery: 24 * 3_600_000, tls: { certPath: "/run/credentials/iplookup.service/cert.pem" } });
  });

  test("shows every setting of serve, set or commented out", () => {
    const shown = new Set(text.split("\n").flatMap((line) => /^(?:# )?([a-z-]+) = /.exec(line)?.[1] ?? []));
    const keyOf = (name: string) => name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
    expect(SERVE_SETTING_NAMES.map(keyOf).filter((key) => !shown.has(key))).toEqual([]);
  });
});

describe("the systemd unit", () => {
  const unit = readFileSync(join(root, "packaging/iplookup.service"), "utf8");
  const directives = new Map<string, string[]>();
  for (const line of unit.split("\n")) {
    const match = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (match) directives.set(match[1] as string, [...(directives.get(match[1] as string) ?? []), match[2] as string]);
  }

  test("has the hardening of CONTRACT §17, validates the configuration before starting, and never MemoryDenyWriteExecute", () => {
    for (const [name, value] of Object.entries({
      DynamicUser: "yes",
      StateDirectory: "iplookup",
      ProtectSystem: "strict",
      ProtectHome: "yes",
      PrivateTmp: "yes",
      NoNewPrivileges: "yes",
      CapabilityBoundingSet: "",
      SystemCallArchitectures: "native",
      ExecStartPre: "/usr/bin/iplookup config check --config /etc/iplookup/iplookup.toml",
      ExecStart: "/usr/bin/iplookup serve --config /etc/iplookup/iplookup.toml",
    })) {
      expect(directives.get(name), name).toEqual([value]);
    }
    expect(directives.get("RestrictAddressFamilies")?.[0]).toBe("AF_INET AF_INET6 AF_UNIX");
    expect(directives.has("MemoryDenyWriteExecute")).toBe(false);
    // setrlimit, which serve uses to raise its descriptor limit (CONTRACT §13), stays allowed.
    expect(directives.get("SystemCallFilter")?.join(" ")).not.toContain("@resources");
  });

  const analyze = Bun.which("systemd-analyze");
  test.skipIf(!analyze)("systemd-analyze security rates it OK or better", () => {
    const result = Bun.spawnSync(["systemd-analyze", "security", "--offline=yes", "--no-pager", join(root, "packaging/iplookup.service")], { stdout: "pipe", stderr: "pipe" });
    const match = /Overall exposure level for iplookup\.service: ([0-9.]+) (\S+)/.exec(result.stdout.toString());
    expect(match, result.stdout.toString() + result.stderr.toString()).not.toBeNull();
    expect(["PERFECT", "SAFE", "OK"]).toContain(match?.[2] as string);
    expect(Number(match?.[1])).toBeLessThan(2);
  });

  test.skipIf(!analyze)("systemd-analyze verify finds nothing wrong (with its commands pointed at files that exist)", () => {
    // verify insists that the commands exist; /usr/bin/iplookup is there once the .deb
    // is installed (CI checks that too), here it stands for the iplookup of this checkout.
    const stand = join(dir, "iplookup");
    writeFileSync(stand, "#!/bin/sh\n", { mode: 0o755 });
    const path = join(dir, "iplookup.service");
    writeFileSync(path, unit.replaceAll("/usr/bin/iplookup", stand));
    const result = Bun.spawnSync(["systemd-analyze", "verify", "--man=no", path], { stdout: "pipe", stderr: "pipe" });
    expect(result.stderr.toString() + result.stdout.toString()).toBe("");
    expect(result.exitCode).toBe(0);
  });
});

describe("the docs the tarball and the .deb ship", () => {
  // A stand-in for the binary: the archives are about what ships beside it.
  const binary = join(dir, "stand-in-binary");
  writeFileSync(binary, "#!/bin/sh\n", { mode: 0o755 });

  /** The regular files under `base`, relative to it. */
  function filesUnder(base: string): string[] {
    return runTool(["find", base, "-type", "f", "-printf", "%P\n"]).split("\n").filter((line) => line !== "").sort();
  }

  /** Each relative link of each Markdown file under `base` that names no file there, as FILE: TARGET. */
  function brokenLinks(base: string, files: readonly string[]): string[] {
    const held = new Set(files);
    return files
      .filter((file) => file.endsWith(".md"))
      .flatMap((file) =>
        [...readFileSync(join(base, file), "utf8").matchAll(/\]\(([^)\s]+)\)/g)]
          .map((match) => (match[1] as string).split("#")[0] as string)
          .filter((target) => target !== "" && !/^[a-z][a-z0-9+.-]*:/i.test(target))
          .filter((target) => !held.has(normalize(join(dirname(file), target))))
          .map((target) => `${file}: ${target}`),
      );
  }

  test("the tarball: the README with the guides and the hosting list it links to, every link finding its file", () => {
    const tarball = join(dir, "iplookup-test.tar.gz");
    writeTarball({ root, binary, notices: notices().path, folderName: "iplookup-test", outfile: tarball, workDir: join(dir, "tar-work"), epoch: 1_700_000_000 });
    const out = join(dir, "from-tarball");
    mkdirSync(out);
    runTool(["tar", "-xzf", tarball, "-C", out]);
    const base = join(out, "iplookup-test");
    const files = filesUnder(base);
    expect(files).toEqual(expect.arrayContaining(["iplookup", "README.md", "LICENSE", "DATA-LICENSES.md", "docs/README.md", "docs/install.md", "data/hosting-asns.csv"]));
    expect(brokenLinks(base, files)).toEqual([]);
    expect(files).toContain("THIRD-PARTY-NOTICES");
    expect(missingNotices(readFileSync(join(base, "THIRD-PARTY-NOTICES"), "utf8"), notices().libraries)).toEqual([]);
    // install.md tells the tarball's reader to write a unit from these.
    for (const file of ["packaging/iplookup.service", "packaging/iplookup.toml"]) {
      expect(readFileSync(join(base, file), "utf8"), file).toBe(readFileSync(join(root, file), "utf8"));
      expect(readFileSync(join(root, "docs/install.md"), "utf8")).toContain(`\`${file}\``);
    }
  });

  test.skipIf(!Bun.which("dpkg-deb"))("the .deb: the same in /usr/share/doc/iplookup, every link finding its file", () => {
    const deb = join(dir, "iplookup-test.deb");
    writeDeb({ root, binary, notices: notices().path, version: "0.0.1", arch: "amd64", outfile: deb, workDir: join(dir, "deb-work"), epoch: 1_700_000_000, level: 1 });
    const out = join(dir, "from-deb");
    runTool(["dpkg-deb", "-x", deb, out]);
    const base = join(out, "usr/share/doc/iplookup");
    const files = filesUnder(base);
    expect(files).toEqual(expect.arrayContaining(["README.md", "copyright", "THIRD-PARTY-NOTICES", "docs/README.md", "docs/install.md", "data/hosting-asns.csv"]));
    expect(brokenLinks(base, files)).toEqual([]);
    expect(missingNotices(readFileSync(join(base, "THIRD-PARTY-NOTICES"), "utf8"), notices().libraries)).toEqual([]);
    // The copyright file gives the executable its own stanza: Bun's runtime, what it links,
    // and every licence of the npm packages bundled in it.
    const copyright = readFileSync(join(base, "copyright"), "utf8");
    const stanza = copyright.split("\n\n").find((paragraph) => paragraph.startsWith("Files: usr/bin/iplookup\n")) ?? "";
    const license = /^License: (.+)$/m.exec(stanza)?.[1] ?? "";
    for (const name of ["MIT", "LGPL-2", ...notices().libraries.map((name) => describePackage(root, name).license)]) {
      expect(license.toLowerCase().split(" and "), `${name} in "License: ${license}"`).toContain(name.toLowerCase());
    }
    expect(stanza).toContain(`https://github.com/oven-sh/bun/blob/bun-v${Bun.version}/LICENSE.md`);
    expect(stanza).toContain("/usr/share/doc/iplookup/THIRD-PARTY-NOTICES");
    expect(copyright).not.toContain("@BUN_VERSION@");
  });
});
