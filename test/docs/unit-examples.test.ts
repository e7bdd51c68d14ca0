// The guides' systemd examples (```ini blocks, test/docs/unit-examples.ts): each says
// where it goes, and `systemd-analyze verify` finds nothing wrong with it there: a
// drop-in beside the .deb's unit, unit files side by side. Skipped, saying so, where
// systemd-analyze is not installed (CI installs it).
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unitExamples, type UnitExample } from "./unit-examples.ts";

const root = join(import.meta.dir, "..", "..");
const files = ["README.md", ...readdirSync(join(root, "docs")).filter((name) => name.endsWith(".md")).sort().map((name) => `docs/${name}`)];
const examples = files.flatMap((file) => unitExamples(readFileSync(join(root, file), "utf8"), file));
const dir = mkdtempSync(join(tmpdir(), "iplookup-unit-examples-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const analyze = Bun.which("systemd-analyze");
if (!analyze) console.warn("test/docs/unit-examples.test.ts: systemd-analyze is not installed: the guides' units are not verified");

describe("the guides' systemd examples", () => {
  test("are the ones the guides show: the drop-ins for a port below 1024 and for credentials, the update timer", () => {
    const shown = examples.map((example) => `${example.file} ${example.kind} ${example.unit}`);
    expect(shown).toEqual(
      expect.arrayContaining([
        "docs/install.md drop-in iplookup.service",
        "docs/tls-and-proxies.md drop-in iplookup.service",
        "docs/data.md unit iplookup-update.service",
        "docs/data.md unit iplookup-update.timer",
      ]),
    );
  });

  test("a drop-in that gives iplookup.service a capability turns PrivateUsers off (the unit's user namespace would leave it no power)", () => {
    const unit = readFileSync(join(root, "packaging/iplookup.service"), "utf8");
    expect(unit).toMatch(/^PrivateUsers=yes$/m);
    const granting = examples.filter((example) => example.kind === "drop-in" && /^AmbientCapabilities=\S/m.test(example.code));
    expect(granting.length).toBeGreaterThan(0);
    for (const example of granting) expect(example.code, `${example.file}:${example.line}`).toMatch(/^PrivateUsers=no$/m);
  });

  const byBlock = Map.groupBy(examples, (example) => `${example.file}:${example.line}`);
  test.skipIf(!analyze).each([...byBlock.keys()])("systemd-analyze verify: %s", (where) => {
    const group = byBlock.get(where) as UnitExample[];
    const folder = join(dir, where.replace(/[/:]/g, "-"));
    mkdirSync(folder, { recursive: true });
    // verify insists that commands exist: a stand-in for /usr/bin/iplookup, as in
    // test/build/packaging.test.ts.
    const stand = join(folder, "iplookup");
    writeFileSync(stand, "#!/bin/sh\n", { mode: 0o755 });
    const place = (name: string, text: string) => writeFileSync(join(folder, name), text.replaceAll("/usr/bin/iplookup", stand));
    const checked: string[] = [];
    for (const example of group) {
      if (example.kind === "unit") {
        place(example.unit, example.code);
        checked.push(example.unit);
      } else {
        place(example.unit, readFileSync(join(root, "packaging", example.unit), "utf8"));
        mkdirSync(join(folder, `${example.unit}.d`), { recursive: true });
        place(join(`${example.unit}.d`, "example.conf"), example.code);
        checked.push(example.unit);
      }
    }
    // The folder first in the search path (the trailing colon keeps the built-in ones
    // after it), so that systemd finds a drop-in beside its unit.
    const result = Bun.spawnSync(["systemd-analyze", "verify", "--man=no", ...checked.map((name) => join(folder, name))], {
      env: { ...process.env, SYSTEMD_UNIT_PATH: `${folder}:` },
      stdout: "pipe",
      stderr: "pipe",
    });
    expect(result.stderr.toString() + result.stdout.toString()).toBe("");
    expect(result.exitCode).toBe(0);
  });
});
