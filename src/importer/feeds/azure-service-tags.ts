import { blockOf, cloudFeedSignal, entryAt, FeedBlocks, isObject, lineOfValue, parseJsonFeed, quoted, type FeedInput, type FeedRead } from "./feed-entry.ts";

/**
 * Azure's Service Tags JSON (ServiceTags_Public_YYYYMMDD.json): `{"changeNumber","cloud":
 * "Public","values":[{"name":"Storage.EastUS","id","properties":{"changeNumber","region":
 * "eastus","platform":"Azure","systemService":"AzureStorage","addressPrefixes":[…]}}]}`.
 * Every block is hosting. Tags overlap: AzureCloud holds all of Azure, AzureCloud.REGION
 * a region's part, and service tags (global, or SERVICE.REGION) the same blocks again; the
 * most specific block wins, and among equal blocks a service's over AzureCloud's and a
 * regional tag's over a global one's. Services are named "Azure Storage (eastus)", and
 * AzureCloud's blocks "Microsoft Azure (eastus)".
 */
const KIND = "Azure Service Tags JSON";

export function readAzureServiceTags(input: FeedInput): FeedRead {
  const signal = cloudFeedSignal(input, KIND);
  const json = parseJsonFeed(input, KIND);
  if (!isObject(json) || !Array.isArray(json.values)) throw new Error(`${input.file}: not an ${KIND}: it has no "values" list`);
  const blocks = new FeedBlocks(input);
  json.values.forEach((tag, i) => {
    const properties = isObject(tag) ? tag.properties : undefined;
    if (!isObject(tag) || typeof tag.name !== "string" || !isObject(properties) || !Array.isArray(properties.addressPrefixes)) {
      throw new Error(`${input.file}: values[${i}] is not {"name", "properties": {"addressPrefixes": […], …}}`);
    }
    const region = typeof properties.region === "string" ? properties.region : "";
    const system = typeof properties.systemService === "string" ? properties.systemService.replace(/^Azure(?=[A-Z])/, "") : "";
    const cloudTag = tag.name === "AzureCloud" || tag.name.startsWith("AzureCloud.");
    const name = cloudTag || system === "" ? "Microsoft Azure" : `Azure ${system}`;
    const service = region === "" ? name : `${name} (${region})`;
    const rank = (cloudTag ? 0 : 2) + (region === "" ? 0 : 1);
    const where = () => entryAt(input, tag.name as string, `values[${i}]`);
    const what = `block (tag ${quoted(tag.name)})`;
    properties.addressPrefixes.forEach((prefix, j) => {
      if (typeof prefix !== "string") throw new Error(`${input.file}: values[${i}].properties.addressPrefixes[${j}] is not text`);
      const block = blockOf(prefix, input.file, () => lineOfValue(input.text, prefix), what, `values[${i}].properties.addressPrefixes[${j}]`);
      blocks.add(block, service, rank, where);
    });
  });
  return { signal, blocks };
}
