import { blockOfFamily, cloudFeedSignal, entryAt, FeedBlocks, feedDate, quoted, isObject, parseJsonFeed, type FeedInput, type FeedRead } from "./feed-entry.ts";

/**
 * AWS's ip-ranges.json: `{"syncToken","createDate":"YYYY-MM-DD-hh-mm-ss","prefixes":
 * [{"ip_prefix","region","service","network_border_group"}],"ipv6_prefixes":
 * [{"ipv6_prefix",…}]}`. Every block is hosting; its service is AWS's service and region
 * ("Amazon EC2 (us-east-1)"). AWS lists its whole space as service AMAZON and the same
 * or smaller blocks again under EC2, S3, …: the more specific service wins. An IPv6
 * block among "prefixes" or an IPv4 one among "ipv6_prefixes" is refused.
 */
const KIND = "AWS ip-ranges.json";

/**
 * AWS's service codes as AWS names the services; others are shown as `AWS CODE`. A Map:
 * the code is the feed's text, and a plain object would answer `__proto__`,
 * `constructor` or `toString` with what Object.prototype holds.
 */
const SERVICE_NAMES: ReadonlyMap<string, string> = new Map(Object.entries({
  AMAZON: "Amazon Web Services",
  EC2: "Amazon EC2",
  S3: "Amazon S3",
  CLOUDFRONT: "Amazon CloudFront",
  CLOUDFRONT_ORIGIN_FACING: "Amazon CloudFront",
  ROUTE53: "Amazon Route 53",
  ROUTE53_HEALTHCHECKS: "Amazon Route 53 health checks",
  ROUTE53_HEALTHCHECKS_PUBLISHING: "Amazon Route 53 health checks",
  ROUTE53_RESOLVER: "Amazon Route 53 Resolver",
  API_GATEWAY: "Amazon API Gateway",
  DYNAMODB: "Amazon DynamoDB",
  EBS: "Amazon EBS",
  GLOBALACCELERATOR: "AWS Global Accelerator",
  CLOUD9: "AWS Cloud9",
  CODEBUILD: "AWS CodeBuild",
  EC2_INSTANCE_CONNECT: "Amazon EC2 Instance Connect",
  WORKSPACES_GATEWAYS: "Amazon WorkSpaces",
  KINESIS_VIDEO_STREAMS: "Amazon Kinesis Video Streams",
  AMAZON_CONNECT: "Amazon Connect",
  AMAZON_APPFLOW: "Amazon AppFlow",
  CHIME_MEETINGS: "Amazon Chime",
  CHIME_VOICECONNECTOR: "Amazon Chime Voice Connector",
}));

export function readAwsIpRanges(input: FeedInput): FeedRead {
  const signal = cloudFeedSignal(input, KIND);
  const json = parseJsonFeed(input, KIND);
  if (!isObject(json) || !Array.isArray(json.prefixes)) throw new Error(`${input.file}: not an ${KIND}: it has no "prefixes" list`);
  const blocks = new FeedBlocks(input);
  const lists: Array<[unknown, string]> = [
    [json.prefixes, "ip_prefix"],
    [json.ipv6_prefixes ?? [], "ipv6_prefix"],
  ];
  for (const [list, key] of lists) {
    if (!Array.isArray(list)) throw new Error(`${input.file}: not an ${KIND}: "${key === "ip_prefix" ? "prefixes" : "ipv6_prefixes"}" is not a list`);
    list.forEach((item, i) => {
      const prefix = isObject(item) ? item[key] : undefined;
      const where = `${key === "ip_prefix" ? "prefixes" : "ipv6_prefixes"}[${i}]`;
      if (!isObject(item) || typeof prefix !== "string" || typeof item.service !== "string" || typeof item.region !== "string") {
        throw new Error(`${input.file}: ${where} is not {"${key}", "region", "service", …}`);
      }
      const block = blockOfFamily(prefix, key === "ip_prefix" ? 4 : 6, input, `${where}.${key}`);
      const name = SERVICE_NAMES.get(item.service) ?? `AWS ${item.service}`;
      blocks.add(block, item.region === "GLOBAL" || item.region === "" ? name : `${name} (${item.region})`, item.service === "AMAZON" ? 0 : 1, () => entryAt(input, prefix, where));
    });
  }
  const builtAt = awsCreated(json.createDate, input);
  return { signal, blocks, ...(builtAt !== undefined ? { builtAt } : {}) };
}

/**
 * When the feed was made: its createDate ("2026-11-24-22-13-08", UTC) as ISO 8601, if it
 * has one; one that is not such a real date, between 2000 and tomorrow, is refused.
 */
function awsCreated(createDate: unknown, input: FeedInput): string | undefined {
  const date = typeof createDate === "string" ? /^(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})$/.exec(createDate) : null;
  if (createDate !== undefined && createDate !== null && date === null) {
    throw new Error(`${input.file}: "createDate" ${typeof createDate === "string" ? quoted(createDate) : JSON.stringify(createDate)?.slice(0, 40)} is not a date and time (YYYY-MM-DD-hh-mm-ss)`);
  }
  return date === null ? undefined : feedDate(`${date[1]}-${date[2]}-${date[3]}T${date[4]}:${date[5]}:${date[6]}Z`, "createDate", input, { written: createDate });
}
