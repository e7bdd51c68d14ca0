import type { SourceDescription } from "../index/network-record.ts";
import type { Signal } from "../index/privacy.ts";
import type { SourceFormat } from "./detect-format.ts";
import type { Family } from "./ranges.ts";

/** A file of a source. What is not given is found out from the file itself. */
export interface SourceFile {
  /**
   * A file path, or (as the operator gives it, before fetch/acquire.ts has fetched it)
   * an `http(s)://` URL, maybe holding credentials; either may be compressed.
   */
  readonly path: string;
  readonly format?: SourceFormat;
  /** For delimited files with integer addresses whose name does not say the family. */
  readonly family?: Family;
  /** `--sha256`: the SHA-256 (hex) the file must have, or the URL of a checksum file. */
  readonly sha256?: string;
  /**
   * How messages name the file when `path` is not what the operator gave (a download or
   * a file unpacked from an archive): the source's location (without credentials) and
   * the file's name in the archive.
   */
  readonly label?: string;
}

/**
 * One source of a data set as the operator names it: a file, or several files holding
 * parts of one data set (its IPv4 and IPv6 halves). Its description, where not given,
 * comes from the file and what sits beside it (see describe-source.ts).
 */
export interface SourceSpec {
  readonly files: readonly SourceFile[];
  readonly describe?: Partial<SourceDescription>;
  /** `--signal` and `--service`: what a feed's addresses are (see feeds/). */
  readonly feed?: FeedOptions;
}

/** What a signal feed's addresses are, where the feed itself does not say (lists, geofeeds). */
export interface FeedOptions {
  readonly signal?: Signal;
  /** The provider or service a hosting or relay feed's addresses belong to. */
  readonly service?: string;
}
