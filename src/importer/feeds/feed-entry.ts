import { showingControls } from "../../access/plain-text.ts";
import { network128, network32, parseCidr, type Cidr } from "../../address/cidr.ts";
import { ipv4Text, ipv6Text } from "../../address/parse.ts";
import { textFault } from "../../corrections/correction-rules.ts";
import type { Signal } from "../../index/privacy.ts";
import { LayerBuilder, type PackedLayer } from "../packed-layer.ts";
import type { FeedOptions } from "../source.ts";

/**
 * The feeds of privacy and hosting signals iplookup reads (CONTRACT §15), one reader a
 * file in this folder, told apart by their content (detect-feed.ts):
 *
 *   aws-ip-ranges        AWS ip-ranges.json                 hosting, a service per prefix
 *   google-cloud         Google Cloud cloud.json            hosting, a service per scope
 *   azure-service-tags   Azure Service Tags JSON            hosting, a service per tag
 *   oracle-cloud         Oracle Cloud public_ip_ranges.json hosting, a service per region
 *   geofeed              RFC 8805 geofeed CSV               --signal hosting|relay --service NAME
 *   address-list         addresses and CIDR blocks, one a line, # comments
 *                                                           --signal SIGNAL [--service NAME]
 */
export const FEED_FORMATS = ["aws-ip-ranges", "google-cloud", "azure-service-tags", "oracle-cloud", "geofeed", "address-list"] as const;

export type FeedFormat = (typeof FEED_FORMATS)[number];

export function isFeedFormat(format: string): format is FeedFormat {
  return (FEED_FORMATS as readonly string[]).includes(format);
}

/** What a feed reader is given: the file's text, its name for messages, and the operator's options. */
export interface FeedInput {
  readonly text: string;
  readonly file: string;
  readonly options: FeedOptions;
  /** The most blocks the feed may list (MAX_FEED_ENTRIES unless a test says less). */
  readonly maxEntries?: number;
}

/** What a feed reader makes of its file: the signal its blocks give, and the blocks. */
export interface FeedRead {
  readonly signal: Signal;
  readonly blocks: FeedBlocks;
  /** When the publisher made the feed (ISO 8601), when the feed says. */
  readonly builtAt?: string;
}

/** Sort keys hold a block's place in its family below this (more than MAX_FEED_ENTRIES). */
const PLACES = 2 ** 20;
/** Ranks run from 0 to RANKS - 1. */
const RANKS = 16;

/**
 * A feed's blocks as it is read, kept lean in typed arrays (a million blocks hold 20 MB
 * here, 44 MB if IPv6, where an object and its Cidr a block took some 300 bytes): per
 * family, each block's first and last address and the index of its service, and a sort
 * key. Where blocks overlap, the more specific one wins; among blocks of the same size
 * the one of higher rank (e.g. EC2's block over the same block listed for all of AWS),
 * then the later one. A feed that lists more than `maxEntries` blocks is refused when
 * the one past the bound is added.
 */
export class FeedBlocks {
  /** The services the blocks name, each once (a block's value is its index here). */
  readonly services: Array<string | null> = [];
  private readonly serviceIndex = new Map<string | null, number>();
  private readonly rows = { 4: new LayerBuilder(1, 64), 6: new LayerBuilder(4, 64) };
  private readonly keys = { 4: new Float64Array(64), 6: new Float64Array(64) };
  private readonly start = new Uint32Array(4);
  private readonly end = new Uint32Array(4);
  private count = 0;
  private readonly file: string;
  private readonly maxEntries: number;

  constructor(input: FeedInput) {
    this.file = input.file;
    this.maxEntries = Math.min(input.maxEntries ?? MAX_FEED_ENTRIES, PLACES);
  }

  /** How many blocks have been added. */
  get length(): number {
    return this.count;
  }

  /** How many of them are of one family. */
  rowsOf(family: 4 | 6): number {
    return this.rows[family].length;
  }

  /**
   * Adds a block. A service not seen before must keep the rule corrections keep theirs
   * to (textFault: at most 200 characters, no control characters), or the feed is
   * refused naming `where` it is (the file, line and entry).
   */
  add(block: Cidr, service: string | null, rank: number, where?: () => string): void {
    if (this.count >= this.maxEntries) {
      throw new Error(`${this.file}: the feed lists more than ${this.maxEntries.toLocaleString("en-US")} blocks, more than any feed of addresses (the largest public ones list a few hundred thousand)`);
    }
    if (!Number.isInteger(rank) || rank < 0 || rank >= RANKS) throw new Error(`rank ${rank} is not 0 to ${RANKS - 1}`);
    let value = this.serviceIndex.get(service);
    if (value === undefined) {
      const fault = service === null ? null : textFault(service);
      if (fault !== null) throw new Error(`${where?.() ?? this.file}: the service ${quoted(service as string)} is refused: a service is ${fault}`);
      value = this.services.push(service) - 1;
      this.serviceIndex.set(service, value);
    }
    const family = block.network.version;
    const rows = this.rows[family];
    let keys = this.keys[family];
    const place = rows.length;
    if (place === keys.length) {
      const grown = new Float64Array(Math.ceil(keys.length * 1.5));
      grown.set(keys);
      this.keys[family] = keys = grown;
    }
    keys[place] = (block.prefix * RANKS + rank) * PLACES + place;
    blockBounds(block, this.start, this.end);
    rows.push(this.start, 0, this.end, 0, value);
    this.count++;
  }

  /**
   * Takes one family's blocks, as rows in the order flattenPacked must see them: by size,
   * largest first, then rank, then place. The family is then left empty (its arrays freed).
   */
  takeSorted(family: 4 | 6): PackedLayer {
    const rows = this.rows[family].layer();
    const keys = this.keys[family].subarray(0, rows.length).sort();
    const W = rows.words;
    const sorted = new LayerBuilder(W, rows.length);
    for (const key of keys) {
      const place = key % PLACES;
      sorted.push(rows.starts, place * W, rows.ends, place * W, rows.values[place] as number);
    }
    this.rows[family] = new LayerBuilder(W, 16);
    this.keys[family] = new Float64Array(16);
    return sorted.layer();
  }
}

/** The first and last address of a block, as words (one for IPv4, four for IPv6). */
function blockBounds(block: Cidr, start: Uint32Array, end: Uint32Array): void {
  const { network, prefix } = block;
  if (network.version === 4) {
    const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
    const first = (network.value & mask) >>> 0;
    start[0] = first;
    end[0] = (first | ~mask) >>> 0;
    return;
  }
  for (let w = 0; w < 4; w++) {
    const bits = Math.min(32, Math.max(0, prefix - w * 32));
    const mask = bits === 0 ? 0 : (0xffffffff << (32 - bits)) >>> 0;
    const first = ((network.words[w] as number) & mask) >>> 0;
    start[w] = first;
    end[w] = (first | ~mask) >>> 0;
  }
}

/**
 * The block written as `text` (`ADDRESS/PREFIX`, or an address alone: a /32 or /128, an
 * IPv4-mapped IPv6 address being its IPv4 address), or an error naming the file, the
 * line it is on (`line` is asked only then: finding a JSON value's line costs a search
 * of the text) and the JSON `entry` it is, if any. Refused, as mistakes that would
 * change answers far beyond what the feed meant:
 * - a block whose host bits are not zero (a typo `1.2.3.4/8` for 1.2.3.0/24 would cover
 *   1.0.0.0/8; corrections refuse it too);
 * - an IPv4-mapped IPv6 block (`::ffff:0:0/96`, every IPv4 address);
 * - a block larger than a /8 (IPv4) or a /16 (IPv6), `0.0.0.0/0` and `::/0` among them
 *   (no public feed lists one: a block that large is taken for a mistake).
 */
export function blockOf(text: string, file: string, line: number | (() => number), what = "block", entry?: string): Cidr {
  const written = text.trim();
  const block = parseCidr(written);
  if (block === null) throw located(file, line, `${quoted(text)} is not an IP address or a CIDR ${what}`);
  const slash = written.indexOf("/");
  if (slash < 0) return block;
  const { network, prefix } = block;
  if (network.version === 4 && written.lastIndexOf(":", slash) >= 0) {
    throw located(file, line, `${named(entry, text)} is an IPv4-mapped IPv6 block: a feed lists IPv4 blocks as IPv4 (${networkText(block)}), and a mapped one is taken for a mistake`);
  }
  if (hasHostBits(block)) throw located(file, line, `${named(entry, text)} has host bits set: the block of that prefix is ${networkText(block)}`);
  const least = network.version === 4 ? MIN_PREFIX_V4 : MIN_PREFIX_V6;
  if (prefix < least) throw located(file, line, `${named(entry, text)} is larger than a /${least}: a block that large in a signal source is taken for a mistake`);
  return block;
}

/** Whether any bit of the block's address past its prefix is set (counted without allocating: a geofeed has a million). */
function hasHostBits({ network, prefix }: Cidr): boolean {
  if (network.version === 4) return network32(network.value, prefix) !== network.value;
  for (let w = 0; w < 4; w++) {
    const bits = Math.min(32, Math.max(0, prefix - w * 32));
    const word = network.words[w] as number;
    const kept = bits === 0 ? 0 : bits === 32 ? word : (word & (0xffffffff << (32 - bits))) >>> 0;
    if (kept !== word) return true;
  }
  return false;
}

/** A block's text as a message names it: after its JSON entry, if any. */
function named(entry: string | undefined, text: string): string {
  return `${entry !== undefined ? `${entry} ` : ""}${quoted(text)}`;
}

/** An error naming the file and (when known) the line. */
function located(file: string, line: number | (() => number), message: string): Error {
  const at = typeof line === "number" ? line : line();
  return new Error(`${file}${at > 0 ? `:${at}` : ""}: ${message}`);
}

/** A block's network and prefix, its host bits zero (`1.2.3.0/24`). */
function networkText({ network, prefix }: Cidr): string {
  return network.version === 4 ? `${ipv4Text(network32(network.value, prefix))}/${prefix}` : `${ipv6Text(network128(network.words, prefix))}/${prefix}`;
}

/**
 * The block of `entry`, a member of a JSON feed that holds blocks of one family only
 * (AWS's "prefixes" and "ipv6_prefixes", Google's "ipv4Prefix" and "ipv6Prefix"): one of
 * the other family (an IPv4-mapped IPv6 address among them) is refused, naming it.
 */
export function blockOfFamily(text: string, family: 4 | 6, input: FeedInput, entry: string): Cidr {
  const line = () => lineOfValue(input.text, text);
  const block = blockOf(text, input.file, line, `block (${entry})`, entry);
  const mapped = block.network.version === 4 && text.includes(":");
  if (block.network.version !== family || mapped) {
    const at = line();
    const is = mapped ? "an IPv4-mapped IPv6 address" : `an IPv${block.network.version} ${text.includes("/") ? "block" : "address"}`;
    throw new Error(`${input.file}${at > 0 ? `:${at}` : ""}: ${entry} ${quoted(text)} is ${is}, where the feed lists IPv${family} blocks`);
  }
  return block;
}

/** The largest blocks a feed may list: a /8 of IPv4, a /16 of IPv6. */
export const MIN_PREFIX_V4 = 8;
export const MIN_PREFIX_V6 = 16;

/**
 * Text as a message quotes it: JSON, cut after 80 characters (a hostile file's line may be
 * long), with the control characters JSON leaves as they are (DEL, C1, among them CSI,
 * which a terminal acts on) and the bidirectional controls (U+202E…) escaped too.
 */
export function quoted(text: string): string {
  const json = text.length > 80 ? `${JSON.stringify(text.slice(0, 80))}…` : JSON.stringify(text);
  return showingControls(json);
}

/**
 * Refuses a feed whose --service breaks the rule textFault says (given to a list or a
 * geofeed, here from the data file's record of an import as well as from the command line).
 */
export function checkServiceOption(input: FeedInput): void {
  const { service } = input.options;
  const fault = service === undefined ? null : textFault(service);
  if (fault !== null) throw new Error(`${input.file}: --service ${quoted(service as string)} is refused: a service is ${fault}`);
}

/**
 * The bounds of a feed, so that whatever the file, reading it stays well under CONTRACT
 * §13's 1 GiB. The public feeds are far smaller: AWS's ip-ranges.json about 2 MB, Azure's
 * Service Tags about 5 MB, Apple's Private Relay egress geofeed about 15 MB and 300,000
 * lines, Tor's exit list some 1,500 lines. A larger file is refused before it is read;
 * a feed that lists more blocks, when the one past the bound is read; JSON that holds
 * more objects and lists, before it is parsed. Nothing is written before that.
 *
 * Peak memory (maximum RSS, `/usr/bin/time -v`) of `data import` of one feed at the
 * bounds, every check of the blocks made, on Bun 1.4.4 (a one-line list: 50 MiB):
 *   list, 1,000,000 IPv4 addresses with comments, 64 MiB           410 MiB
 *   list, 1,000,000 IPv6 addresses with comments, 64 MiB           495 MiB
 *   geofeed, 1,000,000 IPv6 /64 lines, 64 MiB                      510–520 MiB
 *   list of 1,000,001 IPv6 addresses, 64 MiB: refused               400 MiB
 *   list of 256 MiB: refused before it is read                       70 MiB
 *   AWS ip-ranges.json of 16 MiB (176,000 prefixes)                220 MiB
 *   Azure Service Tags of 1,000,000 IPv4 prefixes (15 MB)          365 MiB
 *   Azure Service Tags of 16 MiB of IPv6 prefixes (320,000)        305 MiB
 *   16 MiB of `[{},{},…]`: refused before it is parsed               94 MiB
 *   500,000 objects of one key each, every key another: refused     235 MiB
 * (Before these bounds, a list of 2,000,000 IPv4 addresses, 28.5 MB, took 638 MB, and
 * one of 247 MiB 5.2 GiB.)
 */
export const MAX_FEED_BYTES = 64 * 2 ** 20;
/** A JSON feed is held as objects once parsed, so its bound is lower. */
export const MAX_JSON_FEED_BYTES = 16 * 2 ** 20;
/** The most blocks (lines, prefixes) a feed may list. */
export const MAX_FEED_ENTRIES = 1_000_000;
/** The most objects and lists a JSON feed may hold (AWS's holds one a block); each costs some 90 bytes parsed, more with keys of its own. */
export const MAX_JSON_CONTAINERS = 500_000;

/** The longest line a list or geofeed may have, as for the delimited files. */
export const MAX_FEED_LINE = 65_536;

/** `FILE:LINE: ENTRY` for a message about a JSON entry, its line found as that of `value`'s first appearance (none when not found). */
export function entryAt(input: FeedInput, value: string, entry: string): string {
  const at = lineOfValue(input.text, value);
  return `${input.file}${at > 0 ? `:${at}` : ""}: ${entry}`;
}

/** The 1-based line of a JSON text on which `value` (a string member's text) first appears, or 0. */
export function lineOfValue(text: string, value: string, from = 0): number {
  const at = text.indexOf(JSON.stringify(value), from);
  if (at < 0) return 0;
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < at; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/**
 * Parses a JSON feed, or throws an error naming the file (and, where JSON.parse says, the
 * place). JSON that holds more than MAX_JSON_CONTAINERS objects and lists is refused
 * before it is parsed: each costs some 90 bytes once parsed (`[{},{},…]`).
 */
export function parseJsonFeed(input: FeedInput, kind: string, maxContainers = MAX_JSON_CONTAINERS): unknown {
  if (containersOver(input.text, maxContainers)) {
    throw new Error(`${input.file}: the JSON holds more than ${maxContainers.toLocaleString("en-US")} objects and lists, more than any ${kind}`);
  }
  try {
    return JSON.parse(input.text);
  } catch (error) {
    throw new Error(`${input.file}: not a valid ${kind} (the JSON cannot be read: ${(error as Error).message})`);
  }
}

/**
 * The options a cloud provider's own feed accepts: its signal is hosting, and it names
 * its own services, so --signal may only say hosting and --service is refused.
 */
export function cloudFeedSignal(input: FeedInput, kind: string): Signal {
  if (input.options.signal !== undefined && input.options.signal !== "hosting") {
    throw new Error(`${input.file}: ${kind} lists hosting addresses; --signal ${input.options.signal} does not apply to it`);
  }
  if (input.options.service !== undefined) throw new Error(`${input.file}: ${kind} names its own services; --service does not apply to it`);
  return "hosting";
}

/** Whether the JSON text holds more than `max` objects and lists (`{` or `[` outside strings). */
function containersOver(text: string, max: number): boolean {
  let count = 0;
  let inString = false;
  for (let i = 0, length = text.length; i < length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if ((c === 0x7b || c === 0x5b) && ++count > max) {
      return true;
    }
  }
  return false;
}

/** The earliest date a feed may say it was made: 2000-01-01 (UTC). */
const EARLIEST_FEED_DATE = Date.UTC(2000, 0, 1);
const DAY_MS = 86_400_000;
/** `YYYY-MM-DD`, then maybe `Thh:mm[:ss[.fraction]]` (or a space for the T), then maybe `Z` or an offset. */
const FEED_DATE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * When a feed says it was made, from its member `field` (`value`, as the JSON has it), as
 * ISO 8601 in UTC; undefined when the feed says nothing (or null). A date and time
 * written without an offset is UTC (as AWS, Google and Oracle write theirs). Anything
 * else is refused naming the field (and the text as the feed `written` it): a value that
 * is not such text, or not a real date and time (`2026-02-30`, `25:00`), or one before
 * 2000 or more than a day after `now` (`data info` would show a feed of year 99999 as 0
 * seconds old, and `"0"` was read as 2000-01-01).
 */
export function feedDate(value: unknown, field: string, input: FeedInput, options: { now?: number; written?: unknown } = {}): string | undefined {
  if (value === undefined || value === null) return undefined;
  const now = options.now ?? Date.now();
  const written = options.written ?? value;
  const refuse = (why: string) => new Error(`${input.file}: "${field}" ${typeof written === "string" ? quoted(written) : (JSON.stringify(written)?.slice(0, 40) ?? String(written))} ${why}`);
  const parts = typeof value === "string" ? FEED_DATE.exec(value.trim()) : null;
  if (parts === null) throw refuse("is not a date and time (YYYY-MM-DDThh:mm:ss, UTC or with an offset)");
  const [year, month, day, hour = 0, minute = 0, second = 0] = parts.slice(1, 7).map((part) => (part === undefined ? undefined : Number(part))) as number[];
  const local = Date.UTC(year as number, (month as number) - 1, day, hour, minute, second);
  const checked = new Date(local);
  if (checked.getUTCFullYear() !== year || checked.getUTCMonth() !== (month as number) - 1 || checked.getUTCDate() !== day || checked.getUTCHours() !== hour || checked.getUTCMinutes() !== minute || checked.getUTCSeconds() !== second) {
    throw refuse("is not a real date and time");
  }
  const offset = parts[8];
  const offsetMinutes = offset === undefined || offset === "Z" ? 0 : (offset.startsWith("-") ? -1 : 1) * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(-2)));
  if (offset !== undefined && offset !== "Z" && (Number(offset.slice(1, 3)) > 23 || Number(offset.slice(-2)) > 59)) throw refuse("is not a real date and time");
  const fraction = parts[7] === undefined ? 0 : Math.floor(Number(`0${parts[7]}`) * 1000);
  const time = local + fraction - offsetMinutes * 60_000;
  if (time < EARLIEST_FEED_DATE || time > now + DAY_MS) throw refuse("is not a date between 2000 and tomorrow");
  return new Date(time).toISOString();
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
