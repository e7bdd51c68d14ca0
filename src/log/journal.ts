import { fstatSync } from "node:fs";
import type { LogLevel } from "./logger.ts";

/**
 * Whether file descriptor `fd` (stderr) is the journal's stream that systemd connected
 * this process to: systemd sets JOURNAL_STREAM to that stream's "device:inode", and a
 * process whose stderr is something else since (a pipe of its own, a file) must not take
 * it for the journal.
 */
export function writesToJournal(journalStream: string | undefined, fd = 2): boolean {
  if (!journalStream) return false;
  try {
    const { dev, ino } = fstatSync(fd);
    return journalStream === `${dev}:${ino}`;
  } catch {
    return false;
  }
}

/**
 * The syslog priority prefix of a line of each level (sd-daemon(3)): the journal reads
 * it off the line, keeps the rest as the message, and files the line at that priority,
 * so that `journalctl -p warning` shows the warnings and errors alone.
 */
export const JOURNAL_PRIORITY: Readonly<Record<Exclude<LogLevel, "silent">, string>> = {
  debug: "<7>",
  info: "<6>",
  warn: "<4>",
  error: "<3>",
};
