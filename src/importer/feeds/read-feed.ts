import { privacyOf } from "../../index/privacy.ts";
import type { FieldValues } from "../../index/record-fields.ts";
import { flattenPacked } from "../flatten.ts";
import type { PackedPart } from "../join-parts.ts";
import type { PackedLayer } from "../packed-layer.ts";
import type { FeedOptions } from "../source.ts";
import { readAddressList } from "./address-list.ts";
import { readAwsIpRanges } from "./aws-ip-ranges.ts";
import { readAzureServiceTags } from "./azure-service-tags.ts";
import { MAX_FEED_BYTES, MAX_JSON_FEED_BYTES, type FeedFormat, type FeedInput, type FeedRead } from "./feed-entry.ts";
import { readGeofeed } from "./geofeed.ts";
import { readGoogleCloud } from "./google-cloud.ts";
import { readOracleCloud } from "./oracle-cloud.ts";

const READERS: Readonly<Record<FeedFormat, (input: FeedInput) => FeedRead>> = {
  "aws-ip-ranges": readAwsIpRanges,
  "google-cloud": readGoogleCloud,
  "azure-service-tags": readAzureServiceTags,
  "oracle-cloud": readOracleCloud,
  geofeed: readGeofeed,
  "address-list": readAddressList,
};

/** How `data info` names a feed's source when the operator gives no --name. */
export const FEED_NAMES: Readonly<Record<FeedFormat, string>> = {
  "aws-ip-ranges": "AWS IP address ranges",
  "google-cloud": "Google Cloud IP address ranges",
  "azure-service-tags": "Azure IP ranges and service tags",
  "oracle-cloud": "Oracle Cloud IP address ranges",
  geofeed: "Geofeed",
  "address-list": "Address list",
};

/** The feeds that are JSON, held as objects once parsed: their byte bound is lower. */
const JSON_FEEDS: ReadonlySet<FeedFormat> = new Set(["aws-ip-ranges", "google-cloud", "azure-service-tags", "oracle-cloud"]);

/** The most bytes a feed of this format may have. */
export function feedByteLimit(format: FeedFormat): number {
  return JSON_FEEDS.has(format) ? MAX_JSON_FEED_BYTES : MAX_FEED_BYTES;
}

/** The error for a feed of `size` bytes over its bound `limit`. */
export function feedTooLarge(file: string, size: number, limit: number): Error {
  return new Error(`${file}: ${size.toLocaleString("en-US")} bytes is larger than any feed of addresses (at most ${limit.toLocaleString("en-US")})`);
}

/**
 * Reads a feed into one source's packed part: its blocks as disjoint ranges per family,
 * each with a `privacy` value that sets the feed's signal (and service). Where blocks
 * overlap, the most specific wins, then the higher rank, then the later one (a sort by
 * size, then flattenPacked's "later row wins"). Errors name the file (and line).
 */
export function readFeedPacked(bytes: Uint8Array, options: { format: FeedFormat; file: string; feed?: FeedOptions; maxBytes?: number; maxEntries?: number }): PackedPart {
  const maxBytes = options.maxBytes ?? feedByteLimit(options.format);
  if (bytes.byteLength > maxBytes) throw feedTooLarge(options.file, bytes.byteLength, maxBytes);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`${options.file}: not UTF-8 text`);
  }
  const read = READERS[options.format]({ text, file: options.file, options: options.feed ?? {}, ...(options.maxEntries !== undefined ? { maxEntries: options.maxEntries } : {}) });
  const { blocks } = read;
  if (blocks.length === 0) throw new Error(`${options.file}: the feed lists no addresses`);
  const values: FieldValues[] = blocks.services.map((service) => ({ privacy: privacyOf({ [read.signal]: true }, service) }));
  const rows = { 4: blocks.rowsOf(4), 6: blocks.rowsOf(6) };
  const layer = (family: 4 | 6): PackedLayer => {
    const sorted = blocks.takeSorted(family);
    return sorted.length === 0 ? sorted : flattenPacked(sorted);
  };
  const v4 = layer(4);
  const v6 = layer(6);
  return {
    fields: ["privacy"],
    values,
    rows,
    4: v4,
    6: v6,
    described: { name: FEED_NAMES[options.format], ...(read.builtAt !== undefined ? { builtAt: read.builtAt } : {}) },
  };
}
