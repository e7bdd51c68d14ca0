import type { Privacy, Signal } from "./privacy.ts";
import type { FieldValue, RecordField } from "./record-fields.ts";

/**
 * The network facts of one segment of the address space: the four base fields always,
 * and further fields when the data set has them (null where it has no value).
 */
export type NetworkRecord = Readonly<Partial<Record<RecordField, FieldValue>>> & {
  readonly asn: number | null;
  readonly as_name: string | null;
  readonly country_code: string | null;
  readonly country: string | null;
  readonly privacy: Privacy;
};

/** What a data source is and what its licence asks us to show. */
export interface SourceDescription {
  readonly name: string;
  /** Where it came from: a package name, or the file's name. */
  readonly origin: string;
  readonly version: string;
  readonly license: string;
  readonly attribution: string;
  readonly url: string;
}

/** A source of the loaded data set, as `data info` shows it. Sources are listed in precedence order. */
export interface SourceInfo extends SourceDescription {
  /**
   * The file's layout: mmdb, asn-csv, country-csv, city-csv, iptoasn-tsv, a feed's
   * (aws-ip-ranges, google-cloud, azure-service-tags, oracle-cloud, geofeed, address-list),
   * or hosting-asns (the hosting list).
   */
  readonly format: string;
  /** The privacy signal the source gives (a feed, the hosting list), or null for none. */
  readonly signal: Signal | null;
  /** When the source itself was built (ISO 8601), or "" when it does not say. */
  readonly builtAt: string;
  /** The fields the source has. */
  readonly fields: readonly RecordField[];
  /** Rows (or MMDB networks) in the source, and disjoint ranges after flattening overlaps. */
  readonly rowsV4: number;
  readonly rowsV6: number;
  readonly rangesV4: number;
  readonly rangesV6: number;
}

export interface DataSetInfo {
  /** ISO 8601 UTC time the data file was built. */
  readonly builtAt: string;
  /** Names the data: the sources' versions, joined. */
  readonly version: string;
  /** Changes whenever the data does: the build time and a hash of the tables (`20261122T225001Z-3f9a1c2e`). */
  readonly dataVersion: string;
  /** The fields every lookup result carries, in order. */
  readonly fields: readonly RecordField[];
  readonly sources: readonly SourceInfo[];
  readonly segmentsV4: number;
  readonly segmentsV6: number;
  readonly records: number;
}
