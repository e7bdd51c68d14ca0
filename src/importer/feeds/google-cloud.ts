import { blockOf, cloudFeedSignal, FeedBlocks, isObject, lineOfValue, parseJsonFeed, type FeedInput, type FeedRead } from "./feed-entry.ts";

/**
 * Google Cloud's cloud.json: `{"syncToken","creationTime":"…","prefixes":[{"ipv4Prefix"
 * | "ipv6Prefix","service":"Google Cloud","scope":"us-east1"}]}`. Every block is
 * hosting; its service is the entry's service and scope ("Google Cloud (us-east1)").
 */
const KIND = "Google Cloud cloud.json";

export function readGoogleCloud(input: FeedInput): FeedRead {
  const signal = cloudFeedSignal(input, KIND);
  const json = parseJsonFeed(input, KIND);
  if (!isObject(json) || !Array.isArray(json.prefixes)) throw new Error(`${input.file}: not a ${KIND}: it has no "prefixes" list`);
  const blocks = new FeedBlocks(input);
  json.prefixes.forEach((item, i) => {
    const prefix = isObject(item) ? (item.ipv4Prefix ?? item.ipv6Prefix) : undefined;
    if (!isObject(item) || typeof prefix !== "string") throw new Error(`${input.file}: prefixes[${i}] is not {"ipv4Prefix" or "ipv6Prefix", "service", "scope"}`);
    const block = blockOf(prefix, input.file, () => lineOfValue(input.text, prefix), `block (prefixes[${i}])`);
    const service = typeof item.service === "string" && item.service !== "" ? item.service : "Google Cloud";
    const scope = typeof item.scope === "string" && item.scope !== "" && item.scope !== "global" ? item.scope : null;
    blocks.add(block, scope === null ? service : `${service} (${scope})`, 0);
  });
  const created = typeof json.creationTime === "string" ? new Date(json.creationTime) : null;
  return { signal, blocks, builtAt: created !== null && !Number.isNaN(created.getTime()) ? created.toISOString() : undefined };
}
