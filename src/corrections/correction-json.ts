import type { Correction } from "./correction.ts";

/**
 * A correction as the admin API and `corrections list --json` show it: the block, the
 * fields it names, its note and times. The console's browser script imports this type, so
 * this file and what it imports stay free of Bun's and Node's APIs.
 */
export interface CorrectionJson {
  readonly cidr: string;
  readonly country_code?: string | null;
  readonly asn?: number | null;
  readonly as_name?: string | null;
  readonly city?: string | null;
  readonly privacy?: Readonly<Record<string, boolean | string | null>>;
  readonly note: string | null;
  readonly created_at: string;
  readonly updated_at: string;
}

export function correctionJson(correction: Correction): CorrectionJson {
  return { cidr: correction.cidr, ...correction.fields, note: correction.note, created_at: correction.createdAt, updated_at: correction.updatedAt };
}

/** The fields of a correction in one line for people: `country_code=DE asn=64500 privacy.hosting=true`. */
export function fieldsText(correction: Correction): string {
  const parts: string[] = [];
  for (const [field, value] of Object.entries(correction.fields)) {
    if (field === "privacy") for (const [member, signal] of Object.entries(value as object)) parts.push(`privacy.${member}=${JSON.stringify(signal)}`);
    else parts.push(`${field}=${JSON.stringify(value)}`);
  }
  return parts.join(" ");
}
