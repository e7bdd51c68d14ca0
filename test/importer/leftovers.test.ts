import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { withWorkDir } from "../../src/importer/install.ts";
import { lineProgress } from "../../src/importer/progress.ts";
import { takeUpdateLock } from "../../src/importer/update-lock.ts";

/**
 * What an import or update of a data file removes before it begins: the downloads'
 * folder a killed run of that file left (`.NAME.sources-` and mkdtemp's six characters),
 * and nothing of another data file's beside it, whose name may begin with NAME.sources-.
 */
const root = mkdtempSync(join(tmpdir(), "iplookup-leftovers-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

test("a dead run's downloads' folder goes; a neighbour data file's live folder and its lock stay", async () => {
  const path = join(root, "a");
  // The data file a.sources-b beside a: an update of it runs, holding its lock, with its folder of downloads.
  const neighbour = join(root, "a.sources-b");
  const neighbourLock = takeUpdateLock(neighbour);
  try {
    const neighbourFolder = mkdtempSync(join(root, ".a.sources-b.sources-"));
    writeFileSync(join(neighbourFolder, "download"), "bytes");
    // What a killed update of a left.
    mkdirSync(join(root, ".a.sources-Zz09Qx"));
    writeFileSync(join(root, ".a.sources-Zz09Qx", "download"), "bytes");

    await withWorkDir(path, { now: new Date(), progress: lineProgress(() => {}), env: {} }, async () => {});
    const left = readdirSync(root);
    expect(left).not.toContain(".a.sources-Zz09Qx");
    expect(left).toContain(".a.sources-b.update-lock");
    expect(left.filter((entry) => entry.startsWith(".a.sources-b.sources-"))).toEqual([basename(neighbourFolder)]);
    expect(readdirSync(neighbourFolder)).toEqual(["download"]);
  } finally {
    neighbourLock.release();
  }
});
