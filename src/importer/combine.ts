import type { NetworkRecord } from "../index/network-record.ts";
import { BASE_FIELDS, inFieldOrder, type FieldValue, type FieldValues, type RecordField } from "../index/record-fields.ts";
import { continentName } from "./continent-names.ts";
import { countryName } from "./country-names.ts";
import type { LayerValues } from "./merge.ts";

/**
 * Names are derived from codes, never taken from a source, so one code has one name
 * in every data set (CLDR's English names; see country-names.ts).
 */
const DERIVED: Partial<Record<RecordField, { from: RecordField; name: (code: string) => string | null }>> = {
  country: { from: "country_code", name: countryName },
  continent: { from: "continent_code", name: continentName },
};

/** Whether a field is a name the importer derives from a code (never read from a source). */
export function isDerivedField(field: RecordField): boolean {
  return DERIVED[field] !== undefined;
}

/** The result fields of a data set built from sources with these fields. */
export function dataSetFields(sourceFields: ReadonlyArray<readonly RecordField[]>): RecordField[] {
  const fields = new Set<RecordField>(BASE_FIELDS);
  for (const list of sourceFields) for (const field of list) fields.add(field);
  for (const [field, rule] of Object.entries(DERIVED)) if (fields.has(rule.from)) fields.add(field as RecordField);
  return inFieldOrder(fields);
}

/**
 * Builds records from what each source says, by precedence: a field comes from the
 * first source (in the given order) that has a value for it at that address.
 */
export class RecordCombiner {
  readonly records: NetworkRecord[] = [];
  private readonly sourced: RecordField[];
  /** Record ids by key, per set of active sources (so both families share records when they can). */
  private readonly idsByActive = new Map<string, Map<number | string, number>>();

  constructor(
    private readonly fields: readonly RecordField[],
    private readonly sourceValues: ReadonlyArray<readonly FieldValues[]>,
  ) {
    this.sourced = fields.filter((field) => !DERIVED[field]);
  }

  /**
   * A `recordOf` for merging the layers of the sources `active` (indexes into the
   * sources, in precedence order): the record id for their value indexes at a piece of
   * the space, 0 when none has anything there.
   */
  recorder(active: readonly number[]): (values: LayerValues) => number {
    const signature = active.join(",");
    const ids = this.idsByActive.get(signature) ?? new Map<number | string, number>();
    this.idsByActive.set(signature, ids);
    const all = new Int32Array(this.sourceValues.length);
    // Each source's place value when the value indexes are read as one mixed-radix
    // number (index + 1, 0 for nothing); text keys if that number could pass 2^53.
    const strides: number[] = [];
    let stride = 1;
    for (const source of active) {
      strides.push(stride);
      stride *= (this.sourceValues[source] as readonly FieldValues[]).length + 1;
    }
    const numeric = stride <= Number.MAX_SAFE_INTEGER;
    return (values) => {
      let key: number | string = numeric ? 0 : "";
      let any = false;
      for (let i = 0; i < values.length; i++) {
        const value = values[i] as number;
        if (value >= 0) any = true;
        if (numeric) (key as number) += (value + 1) * (strides[i] as number);
        else key += `${value},`;
      }
      if (!any) return 0;
      let id = ids.get(key);
      if (id === undefined) {
        all.fill(-1);
        active.forEach((source, i) => (all[source] = values[i] as number));
        this.records.push(this.combine(all));
        id = this.records.length;
        ids.set(key, id);
      }
      return id;
    };
  }

  private combine(values: LayerValues): NetworkRecord {
    const record: Record<string, FieldValue> = {};
    for (const field of this.fields) record[field] = null;
    for (const field of this.sourced) {
      for (let source = 0; source < values.length; source++) {
        const index = values[source] as number;
        if (index < 0) continue;
        const value = (this.sourceValues[source] as readonly FieldValues[])[index]?.[field];
        if (value !== undefined && value !== null) {
          record[field] = value;
          break;
        }
      }
    }
    for (const field of this.fields) {
      const rule = DERIVED[field];
      const code = rule ? record[rule.from] : null;
      if (rule && typeof code === "string") record[field] = rule.name(code);
    }
    return record as NetworkRecord;
  }
}
