import { blockOf, cloudFeedSignal, entryAt, FeedBlocks, feedDate, isObject, lineOfValue, parseJsonFeed, quoted, type FeedInput, type FeedRead } from "./feed-entry.ts";

/**
 * Oracle Cloud's public_ip_ranges.json: `{"last_updated_timestamp":"…","regions":
 * [{"region":"us-phoenix-1","cidrs":[{"cidr":"129.146.0.0/21","tags":["OCI"]}]}]}`.
 * Every block is hosting; its service is "Oracle Cloud (REGION)".
 */
const KIND = "Oracle Cloud public_ip_ranges.json";

export function readOracleCloud(input: FeedInput): FeedRead {
  const signal = cloudFeedSignal(input, KIND);
  const json = parseJsonFeed(input, KIND);
  if (!isObject(json) || !Array.isArray(json.regions)) throw new Error(`${input.file}: not an ${KIND}: it has no "regions" list`);
  const blocks = new FeedBlocks(input);
  json.regions.forEach((region, i) => {
    if (!isObject(region) || typeof region.region !== "string" || !Array.isArray(region.cidrs)) {
      throw new Error(`${input.file}: regions[${i}] is not {"region", "cidrs": […]}`);
    }
    const service = region.region === "" ? "Oracle Cloud" : `Oracle Cloud (${region.region})`;
    const where = () => entryAt(input, region.region as string, `regions[${i}]`);
    region.cidrs.forEach((item, j) => {
      const cidr = isObject(item) ? item.cidr : undefined;
      if (typeof cidr !== "string") throw new Error(`${input.file}: regions[${i}].cidrs[${j}] is not {"cidr", "tags"}`);
      blocks.add(blockOf(cidr, input.file, () => lineOfValue(input.text, cidr), `block (region ${quoted(region.region as string)})`, `regions[${i}].cidrs[${j}].cidr`), service, 0, where);
    });
  });
  const builtAt = feedDate(json.last_updated_timestamp, "last_updated_timestamp", input);
  return { signal, blocks, ...(builtAt !== undefined ? { builtAt } : {}) };
}
