import type { SourceDescription } from "../index/network-record.ts";
import type { Family } from "./ranges.ts";

/** Which field of a LookupResult a source layer supplies. */
export type LayerKind = "asn" | "country";

/**
 * One source of a data set: a CSV file per family in an ip-location-db numeric layout
 * (`start,end,…`, decimal, inclusive), with what its licence asks us to show.
 */
export interface SourceSpec extends SourceDescription {
  readonly kind: LayerKind;
  readonly files: Readonly<Record<Family, string>>;
}
