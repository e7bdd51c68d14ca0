import type { Cidr } from "../../address/cidr.ts";
import { privacyOf } from "../../index/privacy.ts";
import type { FieldValues } from "../../index/record-fields.ts";
import { flattenPacked } from "../flatten.ts";
import type { PackedPart } from "../join-parts.ts";
import { LayerBuilder, type PackedLayer } from "../packed-layer.ts";
import type { FeedOptions } from "../source.ts";
import { readAddressList } from "./address-list.ts";
import { readAwsIpRanges } from "./aws-ip-ranges.ts";
import { readAzureServiceTags } from "./azure-service-tags.ts";
import { MAX_FEED_BYTES, type FeedEntry, type FeedFormat, type FeedInput, type FeedRead } from "./feed-entry.ts";
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

/**
 * Reads a feed into one source's packed part: its blocks as disjoint ranges per family,
 * each with a `privacy` value that sets the feed's signal (and service). Where blocks
 * overlap, the most specific wins, then the higher rank, then the later one (a sort by
 * size, then flattenPacked's "later row wins"). Errors name the file (and line).
 */
export function readFeedPacked(bytes: Uint8Array, options: { format: FeedFormat; file: string; feed?: FeedOptions; maxBytes?: number }): PackedPart {
  const maxBytes = options.maxBytes ?? MAX_FEED_BYTES;
  if (bytes.byteLength > maxBytes) {
    throw new Error(`${options.file}: ${bytes.byteLength.toLocaleString("en-US")} bytes is larger than any feed of addresses (at most ${maxBytes.toLocaleString("en-US")})`);
  }
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new Error(`${options.file}: not UTF-8 text`);
  }
  const read = READERS[options.format]({ text, file: options.file, options: options.feed ?? {} });
  if (read.entries.length === 0) throw new Error(`${options.file}: the feed lists no addresses`);

  const values: FieldValues[] = [];
  const valueOf = new Map<string | null, number>();
  const indexOf = (service: string | null): number => {
    let index = valueOf.get(service);
    if (index === undefined) {
      index = values.push({ privacy: privacyOf({ [read.signal]: true }, service) }) - 1;
      valueOf.set(service, index);
    }
    return index;
  };
  const families = { 4: [] as FeedEntry[], 6: [] as FeedEntry[] };
  for (const entry of read.entries) families[entry.block.network.version].push(entry);
  const layer = (family: 4 | 6): PackedLayer => {
    const list = families[family];
    const order = list.map((_, i) => i);
    order.sort((a, b) => {
      const x = list[a] as FeedEntry;
      const y = list[b] as FeedEntry;
      return x.block.prefix - y.block.prefix || x.rank - y.rank || a - b;
    });
    const words = family === 4 ? 1 : 4;
    const rows = new LayerBuilder(words, list.length);
    const start = new Uint32Array(4);
    const end = new Uint32Array(4);
    for (const i of order) {
      const entry = list[i] as FeedEntry;
      blockBounds(entry.block, start, end);
      rows.push(start, 0, end, 0, indexOf(entry.service));
    }
    return rows.length === 0 ? rows.layer() : flattenPacked(rows.layer());
  };
  const v4 = layer(4);
  const v6 = layer(6);
  return {
    fields: ["privacy"],
    values,
    rows: { 4: families[4].length, 6: families[6].length },
    4: v4,
    6: v6,
    described: { name: FEED_NAMES[options.format], ...(read.builtAt !== undefined ? { builtAt: read.builtAt } : {}) },
  };
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
