import type { Privacy } from "./privacy.ts";

/**
 * The fields a lookup result can carry after `ip`, `version`, `found` and `network`, in
 * the order they are written (CONTRACT §1). The first four are always present, and
 * `privacy` (CONTRACT §15), last; the rest appear when the loaded data set has a source
 * with that column.
 */
export const RECORD_FIELDS = [
  "asn",
  "as_name",
  "country_code",
  "country",
  "city",
  "region",
  "postal_code",
  "latitude",
  "longitude",
  "time_zone",
  "continent_code",
  "continent",
  "privacy",
] as const;

export type RecordField = (typeof RECORD_FIELDS)[number];

/** Present in every result, with null when the data has nothing. */
export const BASE_FIELDS: readonly RecordField[] = ["asn", "as_name", "country_code", "country"];

/**
 * Numbers: `asn` (integer), `latitude`, `longitude`; `privacy` is an object (see
 * privacy.ts); every other field is text.
 */
export type FieldValue = string | number | null | Privacy;

/**
 * What one source says about one range. A key with null: the source has that column and
 * no value here; a missing key: the source does not have the column.
 */
export type FieldValues = Partial<Record<RecordField, FieldValue>>;

export function isRecordField(name: string): name is RecordField {
  return (RECORD_FIELDS as readonly string[]).includes(name);
}

/** The fields in RECORD_FIELDS order, each once. */
export function inFieldOrder(fields: Iterable<RecordField>): RecordField[] {
  const wanted = new Set(fields);
  return RECORD_FIELDS.filter((field) => wanted.has(field));
}
