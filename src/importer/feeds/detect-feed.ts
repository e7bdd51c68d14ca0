import { parseCidr } from "../../address/cidr.ts";
import type { FeedFormat } from "./feed-entry.ts";

/**
 * Tells a feed's format from the start of its text (up to the first 64 KiB):
 * - JSON (`{` first): AWS ip-ranges.json has "createDate" and "ip_prefix"; Google
 *   Cloud's cloud.json "creationTime" and "ipv4Prefix"/"ipv6Prefix" with the service
 *   "Google Cloud" (Google's goog.json, its own services' addresses, is not a hosting
 *   feed); Azure Service Tags "changeNumber" and "addressPrefixes"; Oracle Cloud's
 *   "last_updated_timestamp" and "cidrs".
 * - text: the first line that is not blank or a `#` comment, up to a `#` in it: at most
 *   5 comma-separated fields, an address or CIDR block then an empty or two-letter
 *   country code → a geofeed; an address or CIDR block alone (maybe with a `#` comment
 *   after it, commas in the comment or not) → a plain list.
 * Anything else: undefined.
 */
export function detectFeed(head: string): FeedFormat | undefined {
  const text = head.replace(/^\uFEFF/, "");
  if (text.trimStart().startsWith("{")) {
    const has = (...keys: string[]) => keys.every((key) => text.includes(`"${key}"`));
    if (has("createDate", "ip_prefix")) return "aws-ip-ranges";
    if (has("creationTime", "prefixes") && (has("ipv4Prefix") || has("ipv6Prefix")) && text.includes('"Google Cloud"')) return "google-cloud";
    if (has("changeNumber", "values", "addressPrefixes")) return "azure-service-tags";
    if (has("last_updated_timestamp", "regions", "cidrs")) return "oracle-cloud";
    return undefined;
  }
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    // A comment after an entry may hold commas (`1.2.3.4 # exits, old`): look for them before it.
    const hash = line.indexOf("#");
    const entry = (hash < 0 ? line : line.slice(0, hash)).trim();
    if (entry.includes(",")) {
      const fields = entry.split(",");
      const country = (fields[1] as string).trim();
      return fields.length <= 5 && parseCidr((fields[0] as string).trim()) !== null && (country === "" || /^[A-Za-z]{2}$/.test(country)) ? "geofeed" : undefined;
    }
    return parseCidr(entry) !== null ? "address-list" : undefined;
  }
  return undefined;
}
