import { parseCidr, type Cidr } from "../../address/cidr.ts";
import type { Signal } from "../../index/privacy.ts";
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

/** One block of a feed: its addresses and what they are. */
export interface FeedEntry {
  readonly block: Cidr;
  /** The provider or service the block belongs to (hosting and relay feeds), or null. */
  readonly service: string | null;
  /**
   * Where blocks overlap, the more specific one wins; among blocks of the same size the
   * one of higher rank, then the later one (e.g. EC2's block over the same block
   * listed for all of AWS).
   */
  readonly rank: number;
}

/** What a feed reader is given: the file's text, its name for messages, and the operator's options. */
export interface FeedInput {
  readonly text: string;
  readonly file: string;
  readonly options: FeedOptions;
}

/** What a feed reader makes of its file: the signal its entries give, and the entries. */
export interface FeedRead {
  readonly signal: Signal;
  readonly entries: readonly FeedEntry[];
  /** When the publisher made the feed (ISO 8601), when the feed says. */
  readonly builtAt?: string;
}

/**
 * The block written as `text` (`ADDRESS/PREFIX`, or an address alone), or an error
 * naming the file and the line it is on (`line` is asked only then: finding a JSON
 * value's line costs a search of the text).
 */
export function blockOf(text: string, file: string, line: number | (() => number), what = "block"): Cidr {
  const block = parseCidr(text.trim());
  if (block === null) {
    const at = typeof line === "number" ? line : line();
    throw new Error(`${file}${at > 0 ? `:${at}` : ""}: ${quoted(text)} is not an IP address or a CIDR ${what}`);
  }
  return block;
}

/** Text as a message quotes it: JSON, cut after 80 characters (a hostile file's line may be long). */
export function quoted(text: string): string {
  return text.length > 80 ? `${JSON.stringify(text.slice(0, 80))}…` : JSON.stringify(text);
}

/**
 * A feed is at most this large (the largest public one, Azure's Service Tags, is a few
 * megabytes; a geofeed of every relay address some tens): a larger file is refused
 * before it is parsed, so a hostile one cannot make the import hold gigabytes.
 */
export const MAX_FEED_BYTES = 256 * 2 ** 20;

/** The longest line a list or geofeed may have, as for the delimited files. */
export const MAX_FEED_LINE = 65_536;

/** The 1-based line of a JSON text on which `value` (a string member's text) first appears, or 0. */
export function lineOfValue(text: string, value: string, from = 0): number {
  const at = text.indexOf(JSON.stringify(value), from);
  if (at < 0) return 0;
  let line = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < at; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/** Parses a JSON feed, or throws an error naming the file (and, where JSON.parse says, the place). */
export function parseJsonFeed(input: FeedInput, kind: string): unknown {
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

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
