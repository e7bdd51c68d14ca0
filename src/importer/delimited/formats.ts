import { inFieldOrder, type FieldValues, type RecordField } from "../../index/record-fields.ts";

/**
 * The delimited (CSV, TSV) layouts the importer reads. One table serves the reader
 * (read-delimited.ts), format detection and the help text.
 *
 * Every layout starts with the range: `start` and `end`, inclusive, each either address
 * text (IPv4 dotted quad or IPv6) or a decimal integer. No layout has a header line;
 * the reader tolerates one at the top.
 */
export type DelimitedFormat = "asn-csv" | "country-csv" | "city-csv" | "iptoasn-tsv";

/**
 * What a column holds:
 * - `start`, `end`: the range's bounds (always the first two columns);
 * - `asn`: an AS number, an integer 0…4294967295;
 * - `country`: an ISO 3166 two-letter code, any case (stored upper-case);
 * - `latitude`, `longitude`: decimal degrees, within ±90 and ±180;
 * - `text`: kept as written;
 * - `ignored`: read past (the column must be there, its content is not used).
 * An empty field, or one of the column's `noValue` texts, is null.
 */
export type ColumnKind = "start" | "end" | "asn" | "country" | "latitude" | "longitude" | "text" | "ignored";

export interface DelimitedColumn {
  /** The column's name where the file's publisher documents one. */
  readonly name: string;
  readonly kind: ColumnKind;
  /** The record field this column fills; absent for `start`, `end` and `ignored`. */
  readonly field?: RecordField;
  /** Texts that mean "no value", besides the empty field. */
  readonly noValue?: readonly string[];
}

export interface DelimitedLayout {
  readonly format: DelimitedFormat;
  /** The field separator: "," (CSV, RFC 4180 quoting) or "\t" (TSV, no quoting). */
  readonly separator: "," | "\t";
  /** One line for the help text: what files have this layout. */
  readonly summary: string;
  readonly columns: readonly DelimitedColumn[];
  /** The record fields the layout fills, in RECORD_FIELDS order. */
  readonly fields: readonly RecordField[];
  /**
   * A row whose values include all of these holds no data: it adds no range (and hides
   * nothing an earlier row says).
   */
  readonly skipWhen?: FieldValues;
}

const START: DelimitedColumn = { name: "start", kind: "start" };
const END: DelimitedColumn = { name: "end", kind: "end" };

function layout(spec: Omit<DelimitedLayout, "fields">): DelimitedLayout {
  const fields = spec.columns.flatMap((column) => (column.field === undefined ? [] : [column.field]));
  return { ...spec, fields: inFieldOrder(fields) };
}

export const DELIMITED_LAYOUTS: Readonly<Record<DelimitedFormat, DelimitedLayout>> = {
  "asn-csv": layout({
    format: "asn-csv",
    separator: ",",
    summary: "ip-location-db ASN (asn-ipv4.csv, asn-ipv6-num.csv, …)",
    columns: [
      START,
      END,
      { name: "autonomous_system_number", kind: "asn", field: "asn" },
      { name: "autonomous_system_organization", kind: "text", field: "as_name" },
    ],
  }),
  "country-csv": layout({
    format: "country-csv",
    separator: ",",
    summary: "ip-location-db country (geo-whois-asn-country-ipv4.csv, …-country-ipv6-num.csv, …)",
    columns: [START, END, { name: "country_code", kind: "country", field: "country_code" }],
  }),
  "city-csv": layout({
    format: "city-csv",
    separator: ",",
    summary: "ip-location-db city (dbip-city-ipv4.csv, geolite2-city-ipv6-num.csv, …)",
    columns: [
      START,
      END,
      { name: "country_code", kind: "country", field: "country_code" },
      { name: "state1", kind: "text", field: "region" },
      { name: "state2", kind: "ignored" },
      { name: "city", kind: "text", field: "city" },
      { name: "postcode", kind: "text", field: "postal_code" },
      { name: "latitude", kind: "latitude", field: "latitude" },
      { name: "longitude", kind: "longitude", field: "longitude" },
      { name: "timezone", kind: "text", field: "time_zone" },
    ],
  }),
  "iptoasn-tsv": layout({
    format: "iptoasn-tsv",
    separator: "\t",
    summary: "iptoasn.com ip2asn, tab-separated (ip2asn-v4.tsv, ip2asn-v4-u32.tsv, ip2asn-v6.tsv, ip2asn-combined.tsv)",
    columns: [
      { name: "range_start", kind: "start" },
      { name: "range_end", kind: "end" },
      { name: "AS_number", kind: "asn", field: "asn" },
      { name: "country_code", kind: "country", field: "country_code", noValue: ["None"] },
      { name: "AS_description", kind: "text", field: "as_name" },
    ],
    skipWhen: { asn: 0, as_name: "Not routed" },
  }),
};

export const DELIMITED_FORMATS = Object.keys(DELIMITED_LAYOUTS) as DelimitedFormat[];

export function isDelimitedFormat(name: string): name is DelimitedFormat {
  return Object.hasOwn(DELIMITED_LAYOUTS, name);
}

/** The help text's lines for the layouts: name, what files, columns and fields. */
export function delimitedFormatHelp(): string[] {
  const width = Math.max(...DELIMITED_FORMATS.map((format) => format.length));
  return DELIMITED_FORMATS.flatMap((format) => {
    const layout = DELIMITED_LAYOUTS[format];
    const separator = layout.separator === "\t" ? "<TAB>" : ",";
    const pad = " ".repeat(width + 2);
    return [
      `${format.padEnd(width)}  ${layout.summary}`,
      `${pad}columns: ${layout.columns.map((column) => column.name).join(separator)}`,
      `${pad}fields:  ${layout.fields.join(", ")}`,
    ];
  });
}
