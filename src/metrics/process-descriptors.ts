import { readdirSync, readFileSync } from "node:fs";

/** The process's open descriptors and its soft limit on them. */
export interface DescriptorUse {
  readonly open: number;
  readonly max: number;
}

/**
 * Descriptors this process has open and may have, read from /proc when /metrics is
 * asked for (nothing is counted in between); null where there is no /proc.
 *
 * The runtime raises the soft limit to the hard limit as it starts (as Go's does; a
 * test holds it to that). Past the limit, Bun's accept loop (1.4) finds the listening
 * socket readable and accept(2) failing with EMFILE, again and again: the thread spins
 * until connections close, then answers again. These two gauges let an operator see
 * it coming (docs/metrics.md has an alert rule).
 */
export function descriptorUse(): DescriptorUse | null {
  try {
    return readUse();
  } catch {
    return null;
  }
}

/**
 * How many more descriptors this process may open now, or null where it cannot be told
 * (no /proc). Reading the count takes a descriptor itself: a read that fails for want
 * of one (EMFILE, ENFILE) counts as none free.
 */
export function descriptorsFree(): number | null {
  try {
    const use = readUse();
    return use && Math.max(0, use.max - use.open);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException)?.code;
    return code === "EMFILE" || code === "ENFILE" ? 0 : null;
  }
}

function readUse(): DescriptorUse | null {
  const open = readdirSync("/proc/self/fd").length;
  const line = /^Max open files\s+(\d+)/m.exec(readFileSync("/proc/self/limits", "utf8"));
  return line ? { open, max: Number(line[1]) } : null;
}
