import { blockOfFamily, cloudFeedSignal, entryAt, FeedBlocks, feedDate, isObject, parseJsonFeed, type FeedInput, type FeedRead } from "./feed-entry.ts";

/**
 * Google Cloud's cloud.json: `{"syncToken","creationTime":"…","prefixes":[{"ipv4Prefix"
 * | "ipv6Prefix","service":"Google Cloud","scope":"us-east1"}]}`. Every block is
 * hosting; its service is the entry's service and scope ("Google Cloud (us-east1)").
 * An entry giving both an ipv4Prefix and an ipv6Prefix gives two blocks; a service or
 * scope that is there but not text is refused, naming the entry.
 */
const KIND = "Google Cloud cloud.json";

export function readGoogleCloud(input: FeedInput): FeedRead {
  const signal = cloudFeedSignal(input, KIND);
  const json = parseJsonFeed(input, KIND);
  if (!isObject(json) || !Array.isArray(json.prefixes)) throw new Error(`${input.file}: not a ${KIND}: it has no "prefixes" list`);
  const blocks = new FeedBlocks(input);
  json.prefixes.forEach((item, i) => {
    const families = isObject(item) ? ([["ipv4Prefix", 4], ["ipv6Prefix", 6]] as const).filter(([key]) => item[key] !== undefined && item[key] !== null) : [];
    if (!isObject(item) || families.length === 0) throw new Error(`${input.file}: prefixes[${i}] is not {"ipv4Prefix" and/or "ipv6Prefix", "service", "scope"}`);
    const service = optionalText(item, "service", i, input) ?? "Google Cloud";
    const scope = optionalText(item, "scope", i, input);
    const named = scope === undefined || scope === "global" ? service : `${service} (${scope})`;
    // An entry may give both an IPv4 and an IPv6 block: each is a block of the service.
    for (const [key, family] of families) {
      const prefix = item[key];
      if (typeof prefix !== "string") throw new Error(`${input.file}: prefixes[${i}].${key} is not text`);
      blocks.add(blockOfFamily(prefix, family, input, `prefixes[${i}].${key}`), named, 0, () => entryAt(input, prefix, `prefixes[${i}]`));
    }
  });
  const builtAt = feedDate(json.creationTime, "creationTime", input);
  return { signal, blocks, ...(builtAt !== undefined ? { builtAt } : {}) };
}

/** An entry's member that may be left out or empty (undefined then), or else must be text. */
function optionalText(item: Record<string, unknown>, key: string, i: number, input: FeedInput): string | undefined {
  const value = item[key];
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value !== "string") throw new Error(`${input.file}: prefixes[${i}].${key} is not text (${JSON.stringify(value)?.slice(0, 40)})`);
  return value;
}
