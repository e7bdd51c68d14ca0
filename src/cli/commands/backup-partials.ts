import { randomBytes } from "node:crypto";
import { readdirSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/**
 * The partial copy a backup writes beside its target (`.NAME.partial-HEX`), with the
 * files SQLite keeps beside it while it writes.
 */
const SQLITE_SUFFIXES = ["", "-journal", "-wal", "-shm"];

/**
 * How long a partial copy is left unchanged before a later backup of the same target
 * removes it. Age, not a process id, tells a leftover from a live copy: a running backup
 * writes its copy page after page (it waits for a busy state file 10 s at most), so
 * none goes a day untouched; a process id could be reused, or be another host's where
 * the folder is shared.
 */
const LEFTOVER_AFTER_MS = 24 * 3_600_000;

/** A new partial copy's path for `target`. */
export function partialPath(target: string): string {
  return join(dirname(target), `.${basename(target)}.partial-${randomBytes(6).toString("hex")}`);
}

/** Removes the partial copy at `partial` and SQLite's files beside it. */
export function removePartial(partial: string): void {
  for (const suffix of SQLITE_SUFFIXES) rmSync(partial + suffix, { force: true });
}

/**
 * Removes what backups to `target` left when they were killed before they could remove
 * it (SIGKILL, a crash, a power cut): each partial copy, with SQLite's files beside it,
 * once none of them has changed for LEFTOVER_AFTER_MS.
 */
export function removeLeftoverPartials(target: string, now = Date.now()): void {
  const folder = dirname(target);
  const pattern = new RegExp(`^(\\.${escapeRegExp(basename(target))}\\.partial-[0-9a-f]+)(${SQLITE_SUFFIXES.filter(Boolean).join("|")})?$`);
  const copies = new Map<string, string[]>();
  for (const entry of readdirSync(folder)) {
    const copy = pattern.exec(entry)?.[1];
    if (copy !== undefined) copies.set(copy, [...(copies.get(copy) ?? []), entry]);
  }
  for (const entries of copies.values()) {
    try {
      const changed = Math.max(...entries.map((entry) => statSync(join(folder, entry)).mtimeMs));
      if (now - changed > LEFTOVER_AFTER_MS) for (const entry of entries) rmSync(join(folder, entry), { force: true });
    } catch {
      // gone meanwhile
    }
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}
