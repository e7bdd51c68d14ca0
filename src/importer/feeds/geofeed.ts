import { SERVICE_SIGNALS } from "../../index/privacy.ts";
import { blockOf, checkServiceOption, FeedBlocks, MAX_FEED_LINE, type FeedInput, type FeedRead } from "./feed-entry.ts";

/**
 * An RFC 8805 geofeed: CSV lines `ip_prefix,alpha2code,region,city,postal_code` (the
 * fields after the prefix may be empty or left out), `#` comment lines. DigitalOcean
 * publishes its address space as one, and Apple its Private Relay egress addresses.
 * The geofeed says where its blocks are, not what they are: `--signal hosting|relay
 * --service NAME` says that (the locations are not read).
 */
export function readGeofeed(input: FeedInput): FeedRead {
  const { signal, service } = input.options;
  if (signal === undefined || !SERVICE_SIGNALS.includes(signal) || service === undefined) {
    throw new Error(`${input.file}: a geofeed says where its addresses are, not what they are: name that with --signal hosting|relay --service NAME before the file`);
  }
  checkServiceOption(input);
  const blocks = new FeedBlocks(input);
  eachLine(input.text, input.file, (line, number) => {
    if (line.startsWith("#")) return;
    const fields = line.split(",");
    if (fields.length > 5) throw new Error(`${input.file}:${number}: a geofeed line has at most 5 fields (ip_prefix,alpha2code,region,city,postal_code), found ${fields.length}`);
    blocks.add(blockOf(fields[0] as string, input.file, number, "block (a geofeed line begins with one)"), service, 0);
  });
  return { signal, blocks };
}

/**
 * Calls `each` with every line that is not blank, trimmed, and its 1-based number; a
 * line longer than MAX_FEED_LINE characters is refused, naming the file and line.
 */
export function eachLine(text: string, file: string, each: (line: string, number: number) => void): void {
  let number = 0;
  let from = 0;
  const length = text.length;
  while (from <= length) {
    let to = text.indexOf("\n", from);
    if (to < 0) to = length;
    number++;
    if (to - from > MAX_FEED_LINE) throw new Error(`${file}:${number}: the line is longer than ${MAX_FEED_LINE.toLocaleString("en-US")} characters`);
    const line = text.slice(from, to).trim();
    if (line !== "") each(line.charCodeAt(0) === 0xfeff ? line.slice(1).trim() : line, number);
    from = to + 1;
  }
}
