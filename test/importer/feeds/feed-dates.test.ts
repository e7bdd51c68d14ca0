import { describe, expect, test } from "bun:test";
import { feedDate } from "../../../src/importer/feeds/feed-entry.ts";
import type { FeedFormat } from "../../../src/importer/feeds/feed-entry.ts";
import { readFeedPacked } from "../../../src/importer/feeds/read-feed.ts";

// When a cloud provider's feed says it was made is what `data info` shows (`built: …
// (3 hours old)`) and /metrics ages: a date that is not a real date and time between
// 2000 and a day after now is refused naming the field, not shown as year 99999 or
// read as 2000-01-01.

const read = (format: FeedFormat, json: object, file = "feed.json") => readFeedPacked(new TextEncoder().encode(JSON.stringify(json)), { format, file });
const aws = (createDate: unknown) => read("aws-ip-ranges", { syncToken: "1", createDate, prefixes: [{ ip_prefix: "3.5.0.0/16", region: "us-east-1", service: "EC2", network_border_group: "us-east-1" }] }, "ip-ranges.json");
const google = (creationTime: unknown) => read("google-cloud", { syncToken: "1", creationTime, prefixes: [{ ipv4Prefix: "34.1.208.0/20", service: "Google Cloud", scope: "us-east1" }] }, "cloud.json");
const oracle = (last_updated_timestamp: unknown) => read("oracle-cloud", { last_updated_timestamp, regions: [{ region: "us-phoenix-1", cidrs: [{ cidr: "129.146.0.0/21", tags: ["OCI"] }] }] }, "public_ip_ranges.json");

describe("dates the feeds write are read as UTC", () => {
  test("AWS's createDate, Google's creationTime and Oracle's last_updated_timestamp", () => {
    expect(aws("2026-11-24-22-13-08").described?.builtAt).toBe("2026-11-24T22:13:08.000Z");
    expect(google("2026-11-24T23:00:00.123456").described?.builtAt).toBe("2026-11-24T23:00:00.123Z");
    expect(oracle("2026-11-20T10:00:00.000000").described?.builtAt).toBe("2026-11-20T10:00:00.000Z");
    expect(oracle("2026-11-20").described?.builtAt).toBe("2026-11-20T00:00:00.000Z");
    expect(google("2026-11-24T23:00:00-08:00").described?.builtAt).toBe("2026-11-25T07:00:00.000Z");
    expect(google("2026-11-24 23:00:00Z").described?.builtAt).toBe("2026-11-24T23:00:00.000Z");
  });

  test("a feed that gives no date has none", () => {
    expect(aws(undefined).described).not.toHaveProperty("builtAt");
    expect(google(null).described).not.toHaveProperty("builtAt");
  });
});

describe("a date that is not a real timestamp between 2000 and tomorrow is refused, naming the field", () => {
  test.each<[string, () => unknown, string]>([
    ["Oracle in year 99999", () => oracle("99999-01-01"), 'public_ip_ranges.json: "last_updated_timestamp" "99999-01-01" is not a date and time (YYYY-MM-DDThh:mm:ss, UTC or with an offset)'],
    ["Oracle in year 2999", () => oracle("2999-01-01T00:00:00"), 'public_ip_ranges.json: "last_updated_timestamp" "2999-01-01T00:00:00" is not a date between 2000 and tomorrow'],
    ["Google's \"0\"", () => google("0"), 'cloud.json: "creationTime" "0" is not a date and time (YYYY-MM-DDThh:mm:ss, UTC or with an offset)'],
    ["Google's 30 February", () => google("2026-02-30T00:00:00"), 'cloud.json: "creationTime" "2026-02-30T00:00:00" is not a real date and time'],
    ["Google at 25:00", () => google("2026-11-24T25:00:00"), 'cloud.json: "creationTime" "2026-11-24T25:00:00" is not a real date and time'],
    ["Google in 1999", () => google("1999-12-31T23:59:59Z"), 'cloud.json: "creationTime" "1999-12-31T23:59:59Z" is not a date between 2000 and tomorrow'],
    ["Google's number", () => google(1764000000), 'cloud.json: "creationTime" 1764000000 is not a date and time'],
    ["AWS in month 13", () => aws("2026-13-45-99-99-99"), 'ip-ranges.json: "createDate" "2026-13-45-99-99-99" is not a real date and time'],
    ["AWS in another form", () => aws("2026-11-24T22:13:08Z"), 'ip-ranges.json: "createDate" "2026-11-24T22:13:08Z" is not a date and time (YYYY-MM-DD-hh-mm-ss)'],
    ["AWS in year 9999", () => aws("9999-12-31-23-59-59"), 'ip-ranges.json: "createDate" "9999-12-31-23-59-59" is not a date between 2000 and tomorrow'],
  ])("%s", (_, reading, message) => {
    expect(reading).toThrow(message);
  });

  test("within a day after now is taken (a publisher's clock a little ahead); more is refused", () => {
    const input = { text: "", file: "f", options: {} };
    const now = Date.parse("2026-11-29T00:00:00Z");
    expect(feedDate("2026-11-29T23:59:59Z", "creationTime", input, { now })).toBe("2026-11-29T23:59:59.000Z");
    expect(() => feedDate("2026-11-30T00:00:01Z", "creationTime", input, { now })).toThrow('f: "creationTime" "2026-11-30T00:00:01Z" is not a date between 2000 and tomorrow');
  });
});
