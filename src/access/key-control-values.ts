import { hasUnsafeCharacter, printable } from "./plain-text.ts";
import { isShortMappedPrefix, MAPPED_PREFIX_HINT, parseCidr } from "../address/cidr.ts";
import { ipv4Text, ipv6Text } from "../address/parse.ts";
import type { KeyChanges } from "../store/store.ts";

/**
 * The values of a key's controls (CONTRACT §16) as an operator writes them, checked and
 * written canonically, the same for the CLI and the admin API: each function returns the
 * canonical value or throws ControlValueError with a message naming the field. The CLI
 * answers that error with exit 2, the admin API with 400 invalid_request.
 */
export class ControlValueError extends Error {
  override readonly name = "ControlValueError";
}

/** The most entries an allowlist holds: a list is checked on every request. */
export const MAX_LIST_ENTRIES = 100;
/** The largest metadata object, as compact JSON in UTF-8 bytes. */
export const MAX_METADATA_BYTES = 1024;
/** The longest rotation grace: 30 days. */
export const MAX_GRACE_MS = 30 * 86_400_000;

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(?:[Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * Whether an RFC 3339 time names a moment that exists: its fields in their ranges, its
 * day in its month (Date.parse would carry 2030-02-30 over to March 2nd, and T24:00 to
 * the next day). A leap second (:60) is refused: JavaScript's clock has none.
 */
function isRealTime(text: string): boolean {
  const fields = RFC3339.exec(text);
  if (!fields) return false;
  const [year, month, day, hour, minute, second] = fields.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  const offsetInRange = fields[8] === undefined || (Number(fields[8]) <= 23 && Number(fields[9]) <= 59);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth && hour <= 23 && minute <= 59 && second <= 59 && offsetInRange;
}

/**
 * `expires_at`: an RFC 3339 time with its offset (`2027-01-01T00:00:00Z`,
 * `2027-01-01T01:00:00+01:00`), as ISO 8601 UTC with milliseconds. A time not after
 * `nowMs` is refused: a key that would be born expired is a typo, and revoking says so plainly.
 */
const LAST_TIME_MS = Date.UTC(10000, 0, 1);

export function parseExpiresAt(text: string, nowMs: number, field = "expires_at"): string {
  const ms = isRealTime(text) ? Date.parse(text.toUpperCase()) : Number.NaN;
  if (Number.isNaN(ms)) throw new ControlValueError(`${field}: "${shorten(text)}" is not an RFC 3339 time (e.g. 2027-01-01T00:00:00Z)`);
  if (ms <= nowMs) throw new ControlValueError(`${field}: ${text} is not in the future`);
  // Its offset may carry a time of year 9999 past the end of the year in UTC, which no
  // RFC 3339 text (or PostgreSQL) can hold.
  if (ms >= LAST_TIME_MS) throw new ControlValueError(`${field}: ${text} is after 9999-12-31T23:59:59Z in UTC`);
  return new Date(ms).toISOString();
}

/**
 * `allowed_cidrs`: IPv4 or IPv6 blocks (`203.0.113.0/24`, `2001:db8::/32`) or single
 * addresses, written as their network (host bits cleared) and prefix, each once, in the
 * order given. An empty list means no allowlist.
 */
export function parseCidrList(values: readonly string[], field = "allowed_cidrs"): string[] {
  checkListSize(values, field);
  const out: string[] = [];
  for (const value of values) {
    const cidr = typeof value === "string" ? parseCidr(value.trim()) : null;
    if (!cidr) throw new ControlValueError(`${field}: "${shorten(String(value))}" is not an IP address or CIDR block${typeof value === "string" && isShortMappedPrefix(value.trim()) ? ` (${MAPPED_PREFIX_HINT})` : ""}`);
    const text = canonicalCidr(cidr.network.version, cidr.network.version === 4 ? [cidr.network.value] : cidr.network.words, cidr.prefix);
    if (!out.includes(text)) out.push(text);
  }
  return out;
}

/**
 * `allowed_origins`: browser origins, `http://` or `https://` with a host and an optional
 * port, nothing after (a trailing `/` is dropped). Written as a browser sends them in
 * the Origin header (lower-case host, default port left out), each once. A wildcard
 * (`https://*.example.com`, `*`) is refused with its own message: a request's Origin is
 * compared exactly, so one would never match and the key would refuse every browser.
 */
export function parseOriginList(values: readonly string[], field = "allowed_origins"): string[] {
  checkListSize(values, field);
  const out: string[] = [];
  for (const value of values) {
    if (typeof value === "string" && value.includes("*")) {
      throw new ControlValueError(`${field}: "${shorten(value)}": wildcards are not supported; list each origin, such as https://app.example.com`);
    }
    const origin = typeof value === "string" ? canonicalOrigin(value.trim()) : null;
    if (!origin) throw new ControlValueError(`${field}: "${shorten(String(value))}" is not an origin such as https://app.example.com`);
    if (!out.includes(origin)) out.push(origin);
  }
  return out;
}

/** `metadata`: a JSON object of at most 1 KiB (compact JSON, UTF-8). */
export function parseMetadata(value: unknown, field = "metadata"): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ControlValueError(`${field}: must be a JSON object`);
  const fault = faultAt(value);
  if (fault?.what === "text") throw new ControlValueError(`${field}${fault.at}: a control character or a lone surrogate is not allowed`);
  // JSON.parse reads 1e400 as Infinity, which JSON.stringify would keep as null.
  if (fault?.what === "number") throw new ControlValueError(`${field}${fault.at}: a number too large to keep (it would read null)`);
  const bytes = Buffer.byteLength(JSON.stringify(value), "utf8");
  if (bytes > MAX_METADATA_BYTES) throw new ControlValueError(`${field}: ${bytes} bytes of JSON; at most ${MAX_METADATA_BYTES} are kept`);
  return value as Record<string, unknown>;
}

/**
 * Where in a JSON value (`/team`, `/tags/0`, "" for the value itself) a string or member
 * name holds a control character or a lone surrogate (`text`), or a number is not finite
 * (`number`); null where neither is.
 */
function faultAt(value: unknown, at = ""): { at: string; what: "text" | "number" } | null {
  if (typeof value === "string") return hasUnsafeCharacter(value) ? { at, what: "text" } : null;
  if (typeof value === "number") return Number.isFinite(value) ? null : { at, what: "number" };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = faultAt(value[i], `${at}/${i}`);
      if (found !== null) return found;
    }
  } else if (value !== null && typeof value === "object") {
    for (const [name, member] of Object.entries(value)) {
      if (hasUnsafeCharacter(name)) return { at: `${at}/${printable(name)}`, what: "text" };
      const found = faultAt(member, `${at}/${name}`);
      if (found !== null) return found;
    }
  }
  return null;
}

/**
 * A rotation's grace: a duration (`24h`, `90m`, `7d`, `1h30m`) of at most 30 days, in
 * milliseconds; `0s` (or `0`) for none.
 */
export function parseGrace(text: string, field = "grace"): number {
  if (text === "0") return 0;
  if (!/^([0-9]{1,9}[dhms])+$/.test(text)) throw new ControlValueError(`${field}: "${shorten(text)}" is not a duration (e.g. 24h, 90m, 7d, 1h30m)`);
  const unit: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };
  let ms = 0;
  for (const [, count, letter] of text.matchAll(/([0-9]+)([dhms])/g)) ms += Number(count) * (unit[letter as string] as number);
  if (ms > MAX_GRACE_MS) throw new ControlValueError(`${field}: ${text} is longer than the longest grace, 30d`);
  return ms;
}

function checkListSize(values: readonly unknown[], field: string): void {
  if (!Array.isArray(values)) throw new ControlValueError(`${field}: must be a list`);
  if (values.length > MAX_LIST_ENTRIES) throw new ControlValueError(`${field}: ${values.length} entries; at most ${MAX_LIST_ENTRIES}`);
}

function canonicalCidr(version: 4 | 6, words: readonly number[], prefix: number): string {
  if (version === 4) {
    const mask = prefix === 0 ? 0 : prefix === 32 ? 0xffffffff : ~(0xffffffff >>> prefix);
    return `${ipv4Text(((words[0] as number) & mask) >>> 0)}/${prefix}`;
  }
  const masked = words.map((word, i) => {
    const bits = Math.max(0, Math.min(32, prefix - 32 * i));
    const mask = bits === 0 ? 0 : bits === 32 ? 0xffffffff : ~(0xffffffff >>> bits);
    return (word & mask) >>> 0;
  });
  return `${ipv6Text(masked)}/${prefix}`;
}

function canonicalOrigin(text: string): string | null {
  if (!/^https?:\/\/[^/?#@\s]+\/?$/i.test(text)) return null;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return null;
  }
  if (url.hostname === "" || url.username !== "" || url.password !== "") return null;
  return url.origin;
}

function shorten(value: string): string {
  return value.length <= 80 ? value : `${value.slice(0, 77)}...`;
}

/** A key's controls as the admin API and the CLI's --json write them; null clears one. */
export interface ControlJson {
  readonly expires_at?: string | null;
  readonly allowed_cidrs?: readonly string[] | null;
  readonly allowed_origins?: readonly string[] | null;
  readonly metadata?: Readonly<Record<string, unknown>> | null;
}

/**
 * The changes a ControlJson asks for, checked and canonical (a member left out: no
 * change; null, an empty list or an empty object: cleared). Throws ControlValueError.
 */
export function controlsFromJson(json: ControlJson, nowMs: number): KeyChanges {
  const changes: { -readonly [K in keyof KeyChanges]: KeyChanges[K] } = {};
  if (json.expires_at !== undefined) changes.expiresAt = json.expires_at === null ? null : parseExpiresAt(json.expires_at, nowMs);
  if (json.allowed_cidrs !== undefined) changes.allowedCidrs = json.allowed_cidrs === null ? null : orNull(parseCidrList(json.allowed_cidrs));
  if (json.allowed_origins !== undefined) changes.allowedOrigins = json.allowed_origins === null ? null : orNull(parseOriginList(json.allowed_origins));
  if (json.metadata !== undefined) {
    const metadata = json.metadata === null ? null : parseMetadata(json.metadata);
    changes.metadata = metadata === null || Object.keys(metadata).length === 0 ? null : metadata;
  }
  return changes;
}

function orNull(list: string[]): string[] | null {
  return list.length === 0 ? null : list;
}
