import { existsSync } from "node:fs";
import { ConfigError } from "../config/config-error.ts";
import { textFault } from "../corrections/correction-rules.ts";
import type { SourceDescription } from "../index/network-record.ts";
import { isSignal, SERVICE_SIGNALS, SIGNALS, type Signal } from "../index/privacy.ts";
import { SOURCE_FORMATS, type SourceFormat } from "../importer/detect-format.ts";
import { quoted } from "../importer/feeds/feed-entry.ts";
import { isSha256Hex } from "../importer/fetch/checksum.ts";
import { isUrl, redactSecrets } from "../importer/fetch/locations.ts";
import type { SourceSpec } from "../importer/source.ts";

/** Source options: each applies to the FILE that follows it. */
const DESCRIBING: Readonly<Record<string, keyof SourceDescription>> = {
  "--name": "name",
  "--license": "license",
  "--attribution": "attribution",
  "--url": "url",
  "--source-version": "version",
};

export interface ImportArgs {
  readonly sources: SourceSpec[];
  /** --data, when given on the command line. */
  readonly data?: string;
  readonly json: boolean;
  /** Put the default data set after the FILEs. */
  readonly withDefault: boolean;
  /** --download-timeout, --max-expanded (as given; read with the settings) and --require-checksum. */
  readonly downloads: { readonly "download-timeout"?: string; readonly "max-expanded"?: string; readonly requireChecksum: boolean };
}

/**
 * Parses `data import`'s arguments: command flags anywhere, source options before the
 * FILE they describe (like a compiler's per-file options), FILEs in precedence order,
 * `FILE + FILE` for two files of one source (its IPv4 and IPv6 halves). A FILE may be an
 * http(s) URL; messages never quote its credentials.
 */
export function parseImportArgs(argv: readonly string[]): ImportArgs {
  const sources: SourceSpec[] = [];
  let pending: { format?: SourceFormat; family?: 4 | 6; sha256?: string; signal?: Signal; service?: string; describe: Partial<Record<keyof SourceDescription, string>> } = { describe: {} };
  let pendingFlags: string[] = [];
  let data: string | undefined;
  let json = false;
  let withDefault = false;
  const downloads: { "download-timeout"?: string; "max-expanded"?: string; requireChecksum: boolean } = { requireChecksum: false };
  let joinNext = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = (): string => {
      const next = inline ?? argv[++i];
      if (next === undefined || (inline === undefined && next.startsWith("--"))) throw new ConfigError(`${flag} needs a value`);
      return next;
    };
    if (arg === "+") {
      if (sources.length === 0 || pendingFlags.length > 0 || joinNext) throw new ConfigError('"+" joins two FILEs into one source: FILE + FILE');
      joinNext = true;
    } else if (flag === "--json") {
      json = true;
    } else if (flag === "--with-default") {
      withDefault = true;
    } else if (flag === "--data") {
      data = value();
    } else if (flag === "--download-timeout" || flag === "--max-expanded") {
      downloads[flag.slice(2) as "download-timeout" | "max-expanded"] = value();
    } else if (flag === "--require-checksum") {
      downloads.requireChecksum = true;
    } else if (flag === "--format") {
      const format = value();
      if (!(SOURCE_FORMATS as readonly string[]).includes(format)) throw new ConfigError(`--format must be one of ${SOURCE_FORMATS.join(", ")} (got "${format}")`);
      pending.format = format as SourceFormat;
      pendingFlags.push(flag);
    } else if (flag === "--family") {
      const family = value();
      if (family !== "4" && family !== "6") throw new ConfigError(`--family must be 4 or 6 (got "${family}")`);
      pending.family = Number(family) as 4 | 6;
      pendingFlags.push(flag);
    } else if (flag === "--sha256") {
      const sha256 = value();
      if (!isSha256Hex(sha256) && !(isUrl(sha256) && URL.canParse(sha256))) throw new ConfigError(`--sha256 must be a SHA-256 in hex (64 digits) or the http(s) URL of a checksum file (got "${redactSecrets(sha256)}")`);
      pending.sha256 = sha256;
      pendingFlags.push(flag);
    } else if (flag === "--signal") {
      const signal = value();
      if (!isSignal(signal)) throw new ConfigError(`--signal must be one of ${SIGNALS.join(", ")} (got "${signal}")`);
      pending.signal = signal;
      pendingFlags.push(flag);
    } else if (flag === "--service") {
      const service = value();
      const fault = textFault(service);
      if (fault !== null) throw new ConfigError(`--service must be ${fault} (got ${quoted(service)})`);
      pending.service = service;
      pendingFlags.push(flag);
    } else if (Object.hasOwn(DESCRIBING, flag)) {
      const text = value();
      if (text.trim() === "") throw new ConfigError(`${flag} must not be empty`);
      pending.describe[DESCRIBING[flag] as keyof SourceDescription] = text;
      pendingFlags.push(flag);
    } else if (flag.startsWith("-") && flag !== "-") {
      throw new ConfigError(`unknown option "${flag}"`);
    } else {
      if (isUrl(arg)) {
        if (!URL.canParse(arg)) throw new ConfigError(`${redactSecrets(arg)}: not a URL`);
      } else if (!existsSync(arg)) {
        throw new ConfigError(`${redactSecrets(arg)}: no such file`);
      }
      const file = { path: arg, format: pending.format, family: pending.family, sha256: pending.sha256 };
      const previous = sources[sources.length - 1];
      if (pending.service !== undefined && pending.signal !== undefined && !SERVICE_SIGNALS.includes(pending.signal)) {
        throw new ConfigError(`--service names the provider of hosting or relay addresses; a ${pending.signal} source has none`);
      }
      const feed = pending.signal !== undefined || pending.service !== undefined ? { feed: { signal: pending.signal, service: pending.service } } : {};
      if (joinNext && previous) {
        if (Object.keys(pending.describe).length > 0 || Object.keys(feed).length > 0) throw new ConfigError(`describe a joined source before its first FILE, not before ${redactSecrets(arg)}`);
        sources[sources.length - 1] = { ...previous, files: [...previous.files, file] };
      } else {
        sources.push({ files: [file], describe: pending.describe, ...feed });
      }
      joinNext = false;
      pending = { describe: {} };
      pendingFlags = [];
    }
  }
  if (joinNext) throw new ConfigError('"+" must be followed by a FILE');
  if (pendingFlags.length > 0) throw new ConfigError(`${pendingFlags.join(", ")} must come before the FILE it describes`);
  if (sources.length === 0) throw new ConfigError("name at least one FILE to import");
  return { sources, data, json, withDefault, downloads };
}
