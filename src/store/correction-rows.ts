import { CorrectionError, checkCorrectionFields, checkNote, parseCorrectionBlock } from "../corrections/correction-rules.ts";
import type { Correction, CorrectionFields } from "../corrections/correction.ts";
import { StoreError } from "./store.ts";

/**
 * What both stores do with corrections apart from their SQL: the checks before a write
 * (the store refuses what the admin API and the CLI would, so a snapshot or a caller that
 * skipped them cannot write a correction lookups would choke on), the JSON of the
 * `fields` column, and the order corrections are listed in.
 */

/** Checks a correction to be written; throws StoreError naming the fault. Returns the fields as stored. */
export function checkCorrectionRow(cidr: string, fields: CorrectionFields, note: string | null): CorrectionFields {
  try {
    const block = parseCorrectionBlock(cidr);
    if (block.cidr !== cidr) throw new CorrectionError(`${cidr} is not written canonically (${block.cidr})`);
    checkNote(note);
    return checkCorrectionFields(fields);
  } catch (error) {
    if (error instanceof CorrectionError) throw new StoreError(`the correction of ${cidr}: ${error.message}`);
    throw error;
  }
}

/** The `fields` column: the fields as a JSON object. */
export function fieldsJson(fields: CorrectionFields): string {
  return JSON.stringify(fields);
}

export function fieldsOf(json: string): CorrectionFields {
  return JSON.parse(json) as CorrectionFields;
}

/** IPv4 before IPv6, then by first address, then the larger block first. */
export function inAddressOrder<T extends { readonly cidr: string }>(corrections: T[]): T[] {
  const keyed = corrections.map((correction) => ({ correction, block: parseCorrectionBlock(correction.cidr) }));
  keyed.sort((a, b) => a.block.version - b.block.version || (a.block.first < b.block.first ? -1 : a.block.first > b.block.first ? 1 : a.block.prefix - b.block.prefix));
  return keyed.map(({ correction }) => correction);
}

/** Rows as both stores read them. */
export interface CorrectionRow {
  cidr: string;
  fields: string;
  note: string | null;
  created_at: string | Date;
  updated_at: string | Date;
}

/** Whether writing `fieldsJson` and `note` over `row` would change nothing: such a write is not made (nor recorded, nor announced). */
export function holdsAlready(row: CorrectionRow, fieldsJson: string, note: string | null): boolean {
  return row.fields === fieldsJson && row.note === note;
}

export function toCorrection(row: CorrectionRow): Correction {
  const time = (value: string | Date) => (typeof value === "string" ? value : value.toISOString());
  return { cidr: row.cidr, fields: fieldsOf(row.fields), note: row.note, createdAt: time(row.created_at), updatedAt: time(row.updated_at) };
}
