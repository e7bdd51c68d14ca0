import type { SourceDescription } from "../index/network-record.ts";
import type { SourceFormat } from "./detect-format.ts";
import type { Family } from "./ranges.ts";

/** A file of a source. What is not given is found out from the file itself. */
export interface SourceFile {
  readonly path: string;
  readonly format?: SourceFormat;
  /** For delimited files with integer addresses whose name does not say the family. */
  readonly family?: Family;
}

/**
 * One source of a data set as the operator names it: a file, or several files holding
 * parts of one data set (its IPv4 and IPv6 halves). Its description, where not given,
 * comes from the file and what sits beside it (see describe-source.ts).
 */
export interface SourceSpec {
  readonly files: readonly SourceFile[];
  readonly describe?: Partial<SourceDescription>;
}
