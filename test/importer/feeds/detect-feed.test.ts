import { expect, test } from "bun:test";
import { detectFormat } from "../../../src/importer/detect-format.ts";
import { detectFeed } from "../../../src/importer/feeds/detect-feed.ts";

const detect = (text: string) => detectFormat({ head: new TextEncoder().encode(text) }, "f");

test.each([
  ["aws-ip-ranges", '{\n  "syncToken": "1",\n  "createDate": "2026-11-24-22-13-08",\n  "prefixes": [{"ip_prefix": "3.5.0.0/16", "region": "us-east-1", "service": "EC2"}]'],
  ["google-cloud", '{"syncToken": "1", "creationTime": "2026-11-24T23:00:00", "prefixes": [{"ipv4Prefix": "34.1.208.0/20", "service": "Google Cloud", "scope": "africa-south1"}'],
  ["azure-service-tags", '{\n  "changeNumber": 312,\n  "cloud": "Public",\n  "values": [{"name": "ActionGroup", "properties": {"addressPrefixes": ["13.66.60.119/32"]'],
  ["oracle-cloud", '{"last_updated_timestamp": "2026-11-20T10:00:00", "regions": [{"region": "us-phoenix-1", "cidrs": [{"cidr": "129.146.0.0/21"'],
  ["geofeed", "# RFC 8805\n172.224.224.0/31,GB,GB-EN,London,\n"],
  ["geofeed", "2a02:26f7:b3c0:4000::/64,,,,\n"],
  ["address-list", "185.220.101.1\n185.220.101.2\n"],
  ["address-list", "\uFEFF# Cloudflare\n173.245.48.0/20 # first\n"],
  ["address-list", "2001:67c:e60:c0c::/64"],
  ["address-list", "185.220.101.1 # exits, old\n185.220.101.2\n"],
  ["address-list", "# Tor, bulk exit list\n2001:67c:e60:c0c::/64 #a, b, c, d, e, f\n"],
])("%s by content: %p", (format, text) => {
  expect(detectFeed(text)).toBe(format as never);
  expect(detect(text)).toBe(format as never);
});

test.each([
  ["Google's goog.json (its own services, not a hosting feed)", '{"syncToken": "1", "creationTime": "2026-11-24T23:00:00", "prefixes": [{"ipv4Prefix": "8.8.4.0/24"}]}'],
  ["other JSON", '{"prefixes": []}'],
  ["prose", "hello\n"],
  ["a CIDR header", "network,country_code\n1.0.0.0/24,AU\n"],
  ["a range CSV with six fields", "1.0.0.0,1.0.0.255,a,b,c,d\n"],
  ["a geofeed-like line whose second field is no country", "1.0.0.0/24,north,,,\n"],
  ["comments only", "# nothing\n"],
  ["prose before a comment with a comma", "hello # a, b\n"],
])("not a feed: %s", (_, text) => {
  expect(detectFeed(text)).toBeUndefined();
});

test("range CSVs are still their own formats, not geofeeds or lists", () => {
  expect(detect("1.0.0.0,1.0.0.255,AU\n")).toBe("country-csv");
  expect(detect("1.0.0.0,1.0.0.255,13335,Cloudflare\n")).toBe("asn-csv");
});
