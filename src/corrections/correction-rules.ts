import { characterCount, hasUnsafeCharacter, printable } from "../access/plain-text.ts";
import { isShortMappedPrefix, MAPPED_PREFIX_HINT, parseCidr, type Cidr } from "../address/cidr.ts";
import { ipv4Text, ipv6Text } from "../address/parse.ts";
import { continentOf } from "./country-continents.ts";
import { CORRECTION_FIELDS, PRIVACY_SIGNALS, type CorrectionFields } from "./correction.ts";

/** The longest text a correction keeps (as_name, city, service), in characters (code points, see characterCount). */
export const MAX_TEXT = 200;
/** The longest note, in characters. */
export const MAX_NOTE = 500;
/** The largest AS number (32 bits). */
export const MAX_ASN = 4_294_967_295;

/** A block as corrections key it: canonical text, family, and its first and last address. */
export interface CorrectionBlock {
  readonly cidr: string;
  readonly version: 4 | 6;
  readonly prefix: number;
  readonly first: bigint;
  readonly last: bigint;
}

/**
 * Reads a correction's block: `ADDRESS/PREFIX` (a bare address is its own block, /32 or
 * /128; an IPv4-mapped IPv6 block is the IPv4 block it carries, as lookups answer it).
 * A block whose host bits are not zero (`192.0.2.1/24`) is refused rather than read as
 * the block around it: a typo there would correct addresses the operator did not mean.
 * Throws CorrectionError naming what is wrong.
 */
export function parseCorrectionBlock(text: string): CorrectionBlock {
  const cidr = /^[0-9A-Fa-f:./]{1,64}$/.test(text) ? parseCidr(text) : null;
  if (!cidr) throw new CorrectionError(`"${shorten(text)}" is not a CIDR block (${isShortMappedPrefix(text) ? MAPPED_PREFIX_HINT : "ADDRESS/PREFIX, IPv4 or IPv6"})`);
  const block = blockOf(cidr);
  const networkText = cidr.network.version === 4 ? ipv4Text(Number(block.first)) : ipv6Text(wordsOf(block.first));
  if (block.first !== addressValue(cidr)) {
    throw new CorrectionError(`${shorten(text)} has host bits set: the block of that prefix is ${networkText}/${cidr.prefix}`);
  }
  return { ...block, cidr: `${networkText}/${cidr.prefix}` };
}

function blockOf(cidr: Cidr): Omit<CorrectionBlock, "cidr"> {
  const bits = cidr.network.version === 4 ? 32 : 128;
  const hostBits = BigInt(bits - cidr.prefix);
  const first = (addressValue(cidr) >> hostBits) << hostBits;
  return { version: cidr.network.version, prefix: cidr.prefix, first, last: first + (1n << hostBits) - 1n };
}

function addressValue({ network }: Cidr): bigint {
  if (network.version === 4) return BigInt(network.value);
  return network.words.reduce((value, word) => (value << 32n) | BigInt(word), 0n);
}

/** An IPv6 address's four 32-bit words, most significant first. */
export function wordsOf(value: bigint): [number, number, number, number] {
  return [Number((value >> 96n) & 0xffffffffn), Number((value >> 64n) & 0xffffffffn), Number((value >> 32n) & 0xffffffffn), Number(value & 0xffffffffn)];
}

/**
 * Checks the fields of a correction (already of the right JSON types, or not: this is
 * also what a snapshot being imported is checked with) and returns them with only the
 * members named, in a fixed order. A correction must name at least one field. Throws
 * CorrectionError naming the first fault.
 */
export function checkCorrectionFields(value: unknown): CorrectionFields {
  if (!isObject(value)) throw new CorrectionError("a correction is a JSON object");
  const unknown = Object.keys(value).filter((key) => !(CORRECTION_FIELDS as readonly string[]).includes(key));
  if (unknown.length > 0) throw new CorrectionError(`a correction names no field "${shorten(unknown[0] as string)}"; it may name ${CORRECTION_FIELDS.join(", ")}`);
  const fields: Record<string, unknown> = {};
  if ("country_code" in value) {
    const code = value.country_code;
    if (code !== null && (typeof code !== "string" || continentOf(code) === null)) {
      throw new CorrectionError(`country_code: ${describe(code)} is not an ISO 3166-1 alpha-2 country code (upper case, like "DE")`);
    }
    fields.country_code = code;
  }
  if ("asn" in value) {
    const asn = value.asn;
    if (asn !== null && (typeof asn !== "number" || !Number.isInteger(asn) || asn < 0 || asn > MAX_ASN)) {
      throw new CorrectionError(`asn: ${describe(asn)} is not an AS number (a whole number from 0 to ${MAX_ASN})`);
    }
    fields.asn = asn;
  }
  for (const field of ["as_name", "city"] as const) {
    if (field in value) fields[field] = checkText(value[field], field);
  }
  if ("privacy" in value) fields.privacy = checkPrivacy(value.privacy);
  if (Object.keys(fields).length === 0) throw new CorrectionError(`a correction names at least one of ${CORRECTION_FIELDS.join(", ")}`);
  return fields as CorrectionFields;
}

function checkPrivacy(value: unknown): CorrectionFields["privacy"] {
  if (!isObject(value)) throw new CorrectionError("privacy: an object of hosting, tor, vpn, relay, proxy (true or false) and service (text or null)");
  const privacy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    if (key !== "service" && !(PRIVACY_SIGNALS as readonly string[]).includes(key)) {
      throw new CorrectionError(`privacy names no signal "${shorten(key)}"; it may name ${PRIVACY_SIGNALS.join(", ")} and service`);
    }
  }
  for (const signal of PRIVACY_SIGNALS) {
    if (!(signal in value)) continue;
    if (typeof value[signal] !== "boolean") throw new CorrectionError(`privacy.${signal}: ${describe(value[signal])} is not true or false`);
    privacy[signal] = value[signal];
  }
  if ("service" in value) privacy.service = checkText(value.service, "privacy.service");
  if (Object.keys(privacy).length === 0) throw new CorrectionError("privacy names at least one of hosting, tor, vpn, relay, proxy, service");
  return privacy;
}

function checkText(value: unknown, field: string): string | null {
  if (value === null) return null;
  if (typeof value !== "string") throw new CorrectionError(`${field}: ${describe(value)} is not text or null`);
  return checkNoteLike(value, field, MAX_TEXT);
}

/** A note: null, or 1 to MAX_NOTE characters without control characters. */
export function checkNote(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== "string") throw new CorrectionError(`note: ${describe(value)} is not text`);
  return checkNoteLike(value, "note", MAX_NOTE);
}

function checkNoteLike(value: string, field: string, max: number): string {
  const fault = textFault(value, max);
  if (fault !== null) throw new CorrectionError(`${field}: ${fault}`);
  return value;
}

/**
 * The rule for a short text iplookup keeps and answers (a correction's as_name, city
 * and privacy.service, a note; a signal source's service, from `--service` or from the
 * feed): 1 to `max` characters (MAX_TEXT unless said), not all spaces, without control
 * characters. Null when `value` keeps it; else the rule, for a message.
 */
export function textFault(value: string, max = MAX_TEXT): string | null {
  // `length` counts at least one unit a character: only a longer text needs counting.
  const tooLong = value.length > max && characterCount(value) > max;
  return value.trim() === "" || tooLong || hasUnsafeCharacter(value) ? textRule(max) : null;
}

/** The rule of textFault, as its messages say it. */
export function textRule(max = MAX_TEXT): string {
  return `1 to ${max} characters, not all spaces, without control characters`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  return typeof value === "string" ? `"${shorten(value)}"` : shorten(JSON.stringify(value) ?? String(value));
}

function shorten(text: string): string {
  const shown = printable(text);
  return shown.length > 60 ? `${shown.slice(0, 57)}...` : shown;
}

/** A correction refused for what it says; the admin API answers it 400 invalid_request, the CLI exit 2. */
export class CorrectionError extends Error {
  override readonly name = "CorrectionError";
}
