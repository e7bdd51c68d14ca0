import { SERVICE_SIGNALS } from "../../index/privacy.ts";
import { blockOf, checkServiceOption, FeedBlocks, type FeedInput, type FeedRead } from "./feed-entry.ts";
import { eachLine } from "./geofeed.ts";

/**
 * A plain list: one address or CIDR block a line, `#` starting a comment (a line of its
 * own or the end of one), blank lines ignored. Tor's bulk exit list and Cloudflare's
 * ips-v4 / ips-v6 are such lists. What the addresses are comes from `--signal
 * tor|vpn|proxy|hosting|relay`, and for hosting and relay, optionally, `--service NAME`.
 */
export function readAddressList(input: FeedInput): FeedRead {
  const { signal, service } = input.options;
  if (signal === undefined) {
    throw new Error(`${input.file}: a list of addresses does not say what they are: name it with --signal tor|vpn|proxy|hosting|relay before the file`);
  }
  if (service !== undefined && !SERVICE_SIGNALS.includes(signal)) {
    throw new Error(`${input.file}: --service names the provider of hosting or relay addresses; a ${signal} list has none`);
  }
  checkServiceOption(input);
  const blocks = new FeedBlocks(input);
  eachLine(input.text, input.file, (line, number) => {
    const comment = line.indexOf("#");
    const text = (comment < 0 ? line : line.slice(0, comment)).trim();
    if (text === "") return;
    blocks.add(blockOf(text, input.file, number), service ?? null, 0);
  });
  return { signal, blocks };
}
