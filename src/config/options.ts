import { ConfigError } from "./config-error.ts";

/**
 * Value parsers for flags and their environment variables. Each takes the raw text and
 * the name it came under (`--port` or `IPLOOKUP_PORT`), and throws ConfigError.
 */

export function parsePort(text: string, name: string): number {
  const port = parseWholeNumber(text, name);
  if (port > 65535) throw new ConfigError(`${name}: ${text} is not a port (0-65535)`);
  return port;
}

export function parseWholeNumber(text: string, name: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(text)) throw new ConfigError(`${name}: "${text}" is not a whole number`);
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new ConfigError(`${name}: ${text.length > 24 ? `${text.slice(0, 24)}…` : text} is too large (at most ${Number.MAX_SAFE_INTEGER.toLocaleString("en-US")})`);
  return value;
}

export function parsePositive(text: string, name: string): number {
  const value = parseWholeNumber(text, name);
  if (value < 1) throw new ConfigError(`${name}: must be at least 1`);
  return value;
}

/** A whole number, or `unlimited` (null). */
export function parseLimit(text: string, name: string): number | null {
  return text === "unlimited" ? null : parsePositive(text, name);
}

const SIZE_UNITS: Record<string, number> = { "": 1, b: 1, k: 1024, kb: 1024, kib: 1024, m: 1024 ** 2, mb: 1024 ** 2, mib: 1024 ** 2, g: 1024 ** 3, gb: 1024 ** 3, gib: 1024 ** 3 };

/** A byte size: `2097152`, `512k`, `2MiB`, `2GiB`. */
export function parseByteSize(text: string, name: string): number {
  const match = /^([0-9]{1,12})\s*([a-z]*)$/i.exec(text);
  const unit = match ? SIZE_UNITS[(match[2] as string).toLowerCase()] : undefined;
  if (!match || unit === undefined) throw new ConfigError(`${name}: "${text}" is not a size (e.g. 2097152, 512KiB, 2MiB)`);
  const bytes = Number(match[1]) * unit;
  if (bytes < 1) throw new ConfigError(`${name}: must be at least 1 byte`);
  return bytes;
}

export function parseNonEmpty(text: string, name: string): string {
  if (text.trim() === "") throw new ConfigError(`${name}: must not be empty`);
  return text;
}

/** A whole number from 1 to `max`. */
export function parseBetweenOneAnd(max: number): (text: string, name: string) => number {
  return (text, name) => {
    const value = parsePositive(text, name);
    if (value > max) throw new ConfigError(`${name}: ${text} is more than ${max}`);
    return value;
  };
}
