import type { Family } from "./ranges.ts";

/** Which field of a LookupResult a source layer supplies. */
export type LayerKind = "asn" | "country";

/**
 * One source of a data set: a CSV file per family in an ip-location-db numeric layout
 * (`start,end,…`, decimal, inclusive), with what its licence asks us to show.
 */
export interface SourceSpec {
  readonly name: string;
  readonly package: string;
  readonly version: string;
  readonly license: string;
  readonly attribution: string;
  readonly url: string;
  readonly kind: LayerKind;
  readonly files: Readonly<Record<Family, string>>;
}
