import type { KeyChanges, KeyControls } from "./store.ts";

/**
 * The columns that hold a key's controls and its rotation grace, the same in both stores
 * (src/store/schema.ts migration 3, postgres-schema.ts migration 4): the lists and the
 * metadata as JSON text, the times as ISO 8601 text (SQLite) or timestamptz (PostgreSQL,
 * read back as Date). Null: no such control.
 */
export interface ControlColumns {
  expires_at: string | Date | null;
  allowed_cidrs: string | null;
  allowed_origins: string | null;
  metadata: string | null;
  grace_until: string | Date | null;
}

/** The same columns' values, to write: JSON text and ISO 8601 text, or null. */
export interface ControlValues {
  readonly expiresAt: string | null;
  readonly allowedCidrs: string | null;
  readonly allowedOrigins: string | null;
  readonly metadata: string | null;
}

/** The select list of these columns, after a table alias (`k.`) or none. */
export function controlColumnList(alias = ""): string {
  return ["expires_at", "allowed_cidrs", "allowed_origins", "metadata", "grace_until"].map((column) => alias + column).join(", ");
}

const NO_CONTROLS: ControlValues = { expiresAt: null, allowedCidrs: null, allowedOrigins: null, metadata: null };

/** What a key's row says of its controls and grace: the fields ApiKey carries only when set. */
export function controlFields(row: ControlColumns): { controls?: KeyControls; graceUntil?: string } {
  const fields: { controls?: KeyControls; graceUntil?: string } = {};
  if (row.expires_at !== null || row.allowed_cidrs !== null || row.allowed_origins !== null || row.metadata !== null) {
    fields.controls = {
      expiresAt: isoOf(row.expires_at),
      allowedCidrs: row.allowed_cidrs === null ? null : (JSON.parse(row.allowed_cidrs) as string[]),
      allowedOrigins: row.allowed_origins === null ? null : (JSON.parse(row.allowed_origins) as string[]),
      metadata: row.metadata === null ? null : (JSON.parse(row.metadata) as Record<string, unknown>),
    };
  }
  if (row.grace_until !== null) fields.graceUntil = isoOf(row.grace_until)!;
  return fields;
}

/** The column values of a key's controls (none: every column null). */
export function controlValues(controls: KeyControls | undefined): ControlValues {
  if (!controls) return NO_CONTROLS;
  return {
    expiresAt: controls.expiresAt,
    allowedCidrs: controls.allowedCidrs === null ? null : JSON.stringify(controls.allowedCidrs),
    allowedOrigins: controls.allowedOrigins === null ? null : JSON.stringify(controls.allowedOrigins),
    metadata: controls.metadata === null ? null : JSON.stringify(controls.metadata),
  };
}

/**
 * The controls after `changes` (a field left undefined keeps its value, null clears it),
 * or undefined when none is left. An empty list clears its control: it would otherwise
 * refuse every request, which revocation does more plainly.
 */
export function applyControlChanges(current: KeyControls | undefined, changes: KeyChanges): KeyControls | undefined {
  const next: KeyControls = {
    expiresAt: changes.expiresAt !== undefined ? changes.expiresAt : (current?.expiresAt ?? null),
    allowedCidrs: listOrNull(changes.allowedCidrs !== undefined ? changes.allowedCidrs : (current?.allowedCidrs ?? null)),
    allowedOrigins: listOrNull(changes.allowedOrigins !== undefined ? changes.allowedOrigins : (current?.allowedOrigins ?? null)),
    metadata: changes.metadata !== undefined ? changes.metadata : (current?.metadata ?? null),
  };
  const any = next.expiresAt !== null || next.allowedCidrs !== null || next.allowedOrigins !== null || next.metadata !== null;
  return any ? next : undefined;
}

/** Whether two column sets hold the same controls (then an update writes nothing). */
export function sameControlValues(a: ControlValues, b: ControlValues): boolean {
  return a.expiresAt === b.expiresAt && a.allowedCidrs === b.allowedCidrs && a.allowedOrigins === b.allowedOrigins && a.metadata === b.metadata;
}

function listOrNull(list: readonly string[] | null): readonly string[] | null {
  return list === null || list.length === 0 ? null : list;
}

function isoOf(value: string | Date | null): string | null {
  if (value === null) return null;
  return typeof value === "string" ? value : value.toISOString();
}
