import { readFileSync, statfsSync, statSync } from "node:fs";

/**
 * What the system tells of a disk and of this process's limits on it, for the reason a
 * write failed when the writer's own error does not say (SQLite's SQLITE_IOERR_* name no
 * system error). A test puts its own readings in.
 */
export interface DiskReadings {
  /** The bytes this process may still write on the file system that holds `folder`; undefined where that cannot be told. */
  freeBytes(folder: string): number | undefined;
  /** The largest file this process may write (RLIMIT_FSIZE, `ulimit -f`); undefined when it is not limited. */
  fileSizeLimit(): number | undefined;
  /** The size of the file at `path`; undefined when there is none. */
  fileSize(path: string): number | undefined;
}

/** The readings of this system. */
export const systemDisk: DiskReadings = {
  freeBytes(folder) {
    try {
      const fs = statfsSync(folder);
      // The blocks a file system keeps for root are root's to write.
      const blocks = process.getuid?.() === 0 ? fs.bfree : fs.bavail;
      return blocks * (fs.frsize || fs.bsize);
    } catch {
      return undefined;
    }
  },
  fileSizeLimit,
  fileSize(path) {
    try {
      return statSync(path).size;
    } catch {
      return undefined;
    }
  },
};

/** The file size limit, for a message: "ulimit -f: N bytes". */
export function fileSizeLimitText(limit = fileSizeLimit()): string {
  return `ulimit -f: ${limit === undefined ? "unlimited" : `${limit} bytes`}`;
}

/** The largest file this process may write (RLIMIT_FSIZE, from Linux's /proc), if it is limited. */
export function fileSizeLimit(): number | undefined {
  try {
    const line = /^Max file size\s+(\S+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    const limit = Number(line?.[1]);
    return Number.isFinite(limit) ? limit : undefined;
  } catch {
    return undefined;
  }
}
