import { RECORD_FIELDS, type FieldValues, type RecordField } from "../index/record-fields.ts";
import type { ValueRange } from "./ranges.ts";

/**
 * One family's ranges from one source: disjoint and sorted by start. A range's value is
 * an index into the source's `values`. `rows` counts what the file held (rows, or MMDB
 * networks) before overlaps were flattened.
 */
export interface SourceLayer {
  readonly rows: number;
  readonly ranges: ValueRange<number>[];
}

/** What a reader makes of one source file (or pair of files). */
export interface SourceData {
  /** The columns the source has, in RECORD_FIELDS order. */
  readonly fields: readonly RecordField[];
  /** Distinct values, each once (see ValueTable); ranges refer to them by index. */
  readonly values: readonly FieldValues[];
  readonly v4: SourceLayer;
  readonly v6: SourceLayer;
  /** What the file says about itself (MMDB metadata), used where the operator gave nothing. */
  readonly described?: { readonly name?: string; readonly builtAt?: string };
}

/**
 * Interns FieldValues so that equal values share one index: ranges with equal values
 * then compare equal with ===, which merging neighbours relies on.
 */
export class ValueTable {
  readonly values: FieldValues[] = [];
  private readonly ids = new Map<string, number>();

  intern(values: FieldValues): number {
    const ordered: FieldValues = {};
    for (const field of RECORD_FIELDS) if (field in values) ordered[field] = values[field];
    const key = JSON.stringify(ordered);
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.values.length;
      this.values.push(ordered);
      this.ids.set(key, id);
    }
    return id;
  }
}
