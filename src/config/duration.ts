import { ConfigError } from "./config-error.ts";

const UNIT_MS: Readonly<Record<string, number>> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };

/**
 * The shortest `--update-every`: one second, so that tests (and a mirror of one's own,
 * asked conditionally) can run it quickly. Publishers update daily at most (GeoLite2
 * twice a week, DB-IP monthly) and MaxMind limits downloads per account and day; an
 * interval of hours is what they expect.
 */
export const MIN_UPDATE_EVERY_MS = 1000;
/** The longest: 30 days. */
export const MAX_UPDATE_EVERY_MS = 30 * 86_400_000;

/**
 * `--update-every`: a duration such as `24h`, `6h`, `30m`, `90s`, `1d`, `1h30m`, or
 * `off` (null: no updates).
 */
export function parseUpdateEvery(text: string, name: string): number | null {
  if (text === "off") return null;
  const ms = parseDuration(text, name);
  if (ms < MIN_UPDATE_EVERY_MS) throw new ConfigError(`${name}: "${text}" is shorter than the shortest interval, 1s`);
  if (ms > MAX_UPDATE_EVERY_MS) throw new ConfigError(`${name}: "${text}" is longer than the longest interval, 30d`);
  return ms;
}

/**
 * `--download-timeout`: how long one download may take in all (`30m`, `2h`; at least
 * 1s). The default, 30 minutes, fetches a city data set on a slow link many times over.
 */
export function parseDownloadTimeout(text: string, name: string): number {
  const ms = parseDuration(text, name);
  if (ms < 1000) throw new ConfigError(`${name}: "${text}" is shorter than the shortest timeout, 1s`);
  return ms;
}

/** A duration: one or more NUMBER UNIT, units d, h, m, s (`1h30m`). */
export function parseDuration(text: string, name: string): number {
  if (!/^([0-9]{1,9}[dhms])+$/.test(text)) throw new ConfigError(`${name}: "${text}" is not a duration (e.g. 24h, 6h, 30m, 90s, 1h30m, or off)`);
  let ms = 0;
  for (const [, count, unit] of text.matchAll(/([0-9]+)([dhms])/g)) ms += Number(count) * (UNIT_MS[unit as string] as number);
  return ms;
}

/** A duration as it is written back (`86400000` → `24h`, `5400000` → `1h30m`). */
export function formatDuration(ms: number): string {
  let rest = Math.round(ms / 1000);
  if (rest === 0) return "0s";
  let text = "";
  for (const [unit, size] of [["d", 86_400], ["h", 3600], ["m", 60], ["s", 1]] as const) {
    const count = Math.floor(rest / size);
    if (count > 0) text += `${count}${unit}`;
    rest -= count * size;
  }
  return text;
}
