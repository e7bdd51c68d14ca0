import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { SourceInfo } from "../index/network-record.ts";
import { parseCsvLine } from "./csv.ts";

/**
 * The hosting list: the AS numbers of hosting and cloud providers, kept in the project
 * as data (data/hosting-asns.csv), each with the public record it comes from. The default
 * data answers `privacy.hosting` from it (CONTRACT §15): an address whose AS is listed is
 * hosting, with the provider as its service.
 *
 * The file: `#` comment lines (one of them `# reviewed: YYYY-MM-DD`, the list's date),
 * a header `asn,provider,as_name,record`, then one AS a line; `record` is an http(s) URL.
 */
export const HOSTING_LIST_PATH = join(import.meta.dir, "..", "..", "data", "hosting-asns.csv");

/** The origin `data info` shows for the list: where it lives in the project. */
export const HOSTING_LIST_ORIGIN = "data/hosting-asns.csv";

export interface HostingList {
  /** AS number → the provider's name. */
  readonly asns: ReadonlyMap<number, string>;
  /** The list as a source of the data set. */
  readonly info: SourceInfo;
}

const HEADER = "asn,provider,as_name,record";

/** Reads and checks the hosting list; an error names the file and line. */
export function readHostingList(path = HOSTING_LIST_PATH, origin = HOSTING_LIST_ORIGIN): HostingList {
  const text = readFileSync(path, "utf8");
  const asns = new Map<number, string>();
  let reviewed = "";
  let header = false;
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/\r$/, "");
    const bad = (what: string) => new Error(`${path}, line ${i + 1}: ${what}`);
    if (line.trim() === "") return;
    if (line.startsWith("#")) {
      const date = /^#\s*reviewed:\s*(\d{4}-\d{2}-\d{2})\s*$/.exec(line)?.[1];
      if (date !== undefined) reviewed = date;
      return;
    }
    if (!header) {
      if (line !== HEADER) throw bad(`the header must be "${HEADER}"`);
      header = true;
      return;
    }
    let fields: string[];
    try {
      fields = parseCsvLine(line);
    } catch (error) {
      throw bad((error as Error).message);
    }
    if (fields.length !== 4) throw bad(`4 fields expected (${HEADER}), found ${fields.length}`);
    const [asnText, provider, , record] = fields as [string, string, string, string];
    if (!/^(0|[1-9][0-9]{0,9})$/.test(asnText) || Number(asnText) > 0xffffffff) throw bad(`"${asnText}" is not an AS number`);
    if (provider.trim() === "") throw bad("the provider is empty");
    if (!/^https?:\/\/\S+$/.test(record) || !URL.canParse(record)) throw bad(`the record "${record}" is not an http(s) URL`);
    const asn = Number(asnText);
    if (asns.has(asn)) throw bad(`AS${asn} is listed twice`);
    asns.set(asn, provider);
  });
  if (!header) throw new Error(`${path}: no header "${HEADER}"`);
  if (reviewed === "") throw new Error(`${path}: no "# reviewed: YYYY-MM-DD" line`);
  const digest = new Bun.CryptoHasher("sha256").update(text).digest("hex").slice(0, 8);
  return {
    asns,
    info: {
      name: "Hosting and cloud providers' AS numbers",
      origin,
      // The date and a hash of the list: an edit makes a new version, and `bun run data:default` rebuilds.
      version: `${reviewed}-${digest}`,
      builtAt: `${reviewed}T00:00:00.000Z`,
      license: "MIT (part of iplookup)",
      attribution: "",
      url: "",
      format: "hosting-asns",
      signal: "hosting",
      fields: ["privacy"],
      rowsV4: asns.size,
      rowsV6: 0,
      rangesV4: 0,
      rangesV6: 0,
    },
  };
}
