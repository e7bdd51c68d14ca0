// The .deb, installed with dpkg proper into a throwaway root (dpkg --root, the maintainer
// scripts run without chroot, as DPKG_ROOT tells them): the installed binary runs
// against its installed configuration, an upgrade keeps an operator's edits to the
// conffile, removal keeps it and purge deletes it. Needs dpkg and root (CI runs as root);
// skipped, saying so, where either is missing.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { appendFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile } from "../../src/build/compile.ts";
import { writeDeb } from "../../src/build/deb.ts";
import { writeThirdPartyNotices } from "../../src/build/notices.ts";
import { shippedLibraries } from "../../src/build/sbom.ts";
import { cli, startServerProcess } from "../support/server-process.ts";

const root = join(import.meta.dir, "..", "..");
const hasDpkg = Bun.which("dpkg") !== null && Bun.which("dpkg-deb") !== null;
const isRoot = process.getuid?.() === 0;
if (!hasDpkg || !isRoot) console.warn(`test/build/deb.test.ts: skipped (${!hasDpkg ? "dpkg is not installed" : "not running as root"})`);

const dir = mkdtempSync(join(tmpdir(), "iplookup-deb-"));
const target = join(dir, "root");
const arch = process.arch === "arm64" ? "arm64" : "amd64";
const deb = (version: string) => join(dir, `iplookup_${version}_${arch}.deb`);
const conffile = join(target, "etc/iplookup/iplookup.toml");

function dpkg(...args: string[]) {
  const result = Bun.spawnSync(["dpkg", `--root=${target}`, "--force-script-chrootless", "--force-depends", "--force-not-root", "--log=/dev/null", ...args], {
    stdout: "pipe",
    stderr: "pipe",
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  return { code: result.exitCode, out: result.stdout.toString() + result.stderr.toString() };
}

/** A path's own status (a dangling link is there too), or null when nothing is. */
function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch {
    return null;
  }
}

function installedVersion(): string | null {
  const status = readFileSync(join(target, "var/lib/dpkg/status"), "utf8");
  const entry = status.split("\n\n").find((block) => block.startsWith("Package: iplookup\n"));
  if (!entry || !/^Status: install ok installed$/m.test(entry)) return null;
  return /^Version: (.+)$/m.exec(entry)?.[1] ?? null;
}

beforeAll(() => {
  if (!hasDpkg || !isRoot) return;
  const binary = join(dir, "build", "iplookup");
  compile(binary, null);
  const epoch = Math.floor(Date.now() / 1000);
  const notices = join(dir, "build", "THIRD-PARTY-NOTICES");
  writeThirdPartyNotices(notices, { root, version: "0.1.0", libraries: shippedLibraries(root, join(dir, "build", "meta")).names, bunVersion: Bun.version });
  for (const version of ["0.1.0", "0.1.1"]) writeDeb({ root, binary, notices, version, arch, outfile: deb(version), workDir: dir, epoch, level: 1 });
  // 0.1.2 ships a changed conffile, so that dpkg has two versions to reconcile.
  const unpacked = join(dir, "unpacked");
  Bun.spawnSync(["dpkg-deb", "-R", deb("0.1.1"), unpacked]);
  const control = join(unpacked, "DEBIAN/control");
  writeFileSync(control, readFileSync(control, "utf8").replace(/^Version: .*$/m, "Version: 0.1.2"));
  appendFileSync(join(unpacked, "etc/iplookup/iplookup.toml"), "# a line the package added in 0.1.2\n");
  const built = Bun.spawnSync(["dpkg-deb", "--root-owner-group", "-Zgzip", "-z1", "--build", unpacked, deb("0.1.2")], { stderr: "pipe" });
  if (built.exitCode !== 0) throw new Error(built.stderr.toString());
  rmSync(unpacked, { recursive: true });
  rmSync(join(dir, "build"), { recursive: true });
  for (const sub of ["info", "updates", "triggers"]) mkdirSync(join(target, "var/lib/dpkg", sub), { recursive: true });
  writeFileSync(join(target, "var/lib/dpkg/status"), "");
}, 180_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!hasDpkg || !isRoot)("the .deb", () => {
  test("installs the binary, the unit, the conffile, the docs and the notices; enables and starts nothing", () => {
    const installed = dpkg("-i", deb("0.1.0"));
    expect(installed.code, installed.out).toBe(0);
    expect(installedVersion()).toBe("0.1.0");
    expect(statSync(join(target, "usr/bin/iplookup")).mode & 0o777).toBe(0o755);
    const unit = readFileSync(join(target, "lib/systemd/system/iplookup.service"), "utf8");
    expect(unit).toContain("ExecStart=/usr/bin/iplookup serve --config /etc/iplookup/iplookup.toml");
    expect(readFileSync(conffile, "utf8")).toBe(readFileSync(join(root, "packaging/iplookup.toml"), "utf8"));
    expect(readFileSync(join(target, "var/lib/dpkg/status"), "utf8")).toMatch(/^Conffiles:\n \/etc\/iplookup\/iplookup\.toml [0-9a-f]{32}$/m);
    const copyright = readFileSync(join(target, "usr/share/doc/iplookup/copyright"), "utf8");
    expect(copyright).toStartWith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/");
    expect(copyright).toContain("Files: usr/bin/iplookup\n");
    for (const credit of ["RouteViews", "DB-IP", "nro.net", "CC-BY-4.0", "CC0-1.0"]) expect(copyright).toContain(credit);
    expect(existsSync(join(target, "usr/share/doc/iplookup/README.md"))).toBe(true);
    expect(readFileSync(join(target, "usr/share/doc/iplookup/THIRD-PARTY-NOTICES"), "utf8")).toContain("JavaScriptCore");
    expect(existsSync(join(target, "usr/share/doc/iplookup/docs/README.md"))).toBe(true);
    // Nothing enabled: no wants/ link, no state directory made.
    expect(existsSync(join(target, "etc/systemd/system/multi-user.target.wants/iplookup.service"))).toBe(false);
    expect(existsSync(join(target, "var/lib/iplookup"))).toBe(false);
  });

  test("the installed binary runs against its installed configuration", async () => {
    const binary = [join(target, "usr/bin/iplookup")];
    const checked = cli(["config", "check", "--config", conffile, "--json"], { IPLOOKUP_ADMIN_PORT: "" }, binary);
    expect(checked.code, checked.stderr).toBe(0);
    const settings = JSON.parse(checked.stdout).settings;
    expect(settings.state).toEqual({ value: "/var/lib/iplookup/state.db", source: `file ${conffile}:16` });
    expect(settings.data).toEqual({ value: null, source: "default", embedded: true });
    // The unit's own check, as ExecStartPre runs it.
    expect(cli(["config", "check", "--config", conffile], {}, binary).code).toBe(0);

    // serve with the installed file; the state goes to this test's folder (a flag wins
    // over the file), and the port is a free one.
    const state = join(dir, "state.db");
    const key = JSON.parse(cli(["keys", "create", "--name", "deb", "--json", "--state", state], {}, binary).stdout).key as string;
    const server = await startServerProcess(["--config", conffile, "--state", state], { command: binary });
    try {
      const started = JSON.parse(server.stderr().split("\n").find((line) => line.includes("iplookup serving")) as string);
      expect(started.state).toBe(state);
      expect(started.data).toStartWith("embedded");
      const answer = await fetch(`${server.url}/v1/lookup`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ ip: "1.1.1.1" }),
      });
      expect(answer.status).toBe(200);
      expect(await answer.json()).toMatchObject({ ip: "1.1.1.1", asn: 13335, country_code: "AU" });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 60_000);

  test("upgrades keep the operator's edits to the conffile", () => {
    appendFileSync(conffile, 'log-level = "warn"\n');
    const edited = readFileSync(conffile, "utf8");
    // The package's conffile is the same in 0.1.1: dpkg keeps the edited one, silently.
    const same = dpkg("-i", deb("0.1.1"));
    expect(same.code, same.out).toBe(0);
    expect(installedVersion()).toBe("0.1.1");
    expect(readFileSync(conffile, "utf8")).toBe(edited);
    // 0.1.2 changed it too: told to keep the operator's (as an unattended upgrade is), dpkg
    // keeps it and puts the package's beside it.
    const changed = dpkg("--force-confold", "-i", deb("0.1.2"));
    expect(changed.code, changed.out).toBe(0);
    expect(installedVersion()).toBe("0.1.2");
    expect(readFileSync(conffile, "utf8")).toBe(edited);
    expect(readFileSync(`${conffile}.dpkg-dist`, "utf8")).toContain("# a line the package added in 0.1.2");
    expect(cli(["config", "check", "--config", conffile], {}, [join(target, "usr/bin/iplookup")]).stdout).toMatch(/^log-level\s+warn\s+file /m);
  });

  test("remove keeps the configuration; purge deletes it, and the link that enabling the service made", () => {
    // What `systemctl enable iplookup` makes, from the unit's WantedBy=.
    const wants = join(target, "etc/systemd/system/multi-user.target.wants/iplookup.service");
    mkdirSync(join(wants, ".."), { recursive: true });
    symlinkSync("/lib/systemd/system/iplookup.service", wants);
    const removed = dpkg("--remove", "iplookup");
    expect(removed.code, removed.out).toBe(0);
    expect(existsSync(join(target, "usr/bin/iplookup"))).toBe(false);
    expect(existsSync(join(target, "lib/systemd/system/iplookup.service"))).toBe(false);
    expect(existsSync(conffile)).toBe(true);
    const purged = dpkg("--purge", "iplookup");
    expect(purged.code, purged.out).toBe(0);
    expect(existsSync(conffile)).toBe(false);
    // The postrm leaves it to deb-systemd-helper (init-system-helpers, in every Debian
    // with systemd), as dh_installsystemd's scripts do.
    if (existsSync("/usr/bin/deb-systemd-helper")) expect(lstatOrNull(wants)).toBeNull();
  });
});
