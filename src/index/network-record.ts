/** The network facts of one segment of the address space. */
export interface NetworkRecord {
  readonly asn: number | null;
  readonly as_name: string | null;
  readonly country_code: string | null;
  readonly country: string | null;
}

/** What a data source is and what its licence asks us to show. */
export interface SourceDescription {
  readonly name: string;
  readonly package: string;
  readonly version: string;
  readonly license: string;
  readonly attribution: string;
  readonly url: string;
}

/** A source of the loaded data set, as `data info` shows it. */
export interface SourceInfo extends SourceDescription {
  /** Rows in the source files, and disjoint ranges after flattening overlaps. */
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
  readonly sources: readonly SourceInfo[];
  readonly segmentsV4: number;
  readonly segmentsV6: number;
  readonly records: number;
}
