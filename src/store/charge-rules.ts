import { hasUnsafeCharacter } from "../access/plain-text.ts";
import { isPeriodId } from "./period.ts";
import type { Charge } from "./store.ts";

/** The longest key name, in UTF-16 code units. */
export const MAX_KEY_NAME = 200;

/**
 * Why a charge cannot be made at all (a bug in the caller, not a quota refusal), or null:
 * units and limit must be whole numbers of at least 0 (a limit may be null), the period
 * `YYYY-MM`. Every store checks this before touching its database.
 */
export function chargeError({ units, limit, period }: Charge): RangeError | null {
  if (!Number.isSafeInteger(units) || units < 0) return new RangeError(`units must be a whole number of at least 0 (got ${units})`);
  if (limit !== null && (!Number.isSafeInteger(limit) || limit < 0)) return new RangeError(`limit must be null or a whole number of at least 0 (got ${limit})`);
  if (!isPeriodId(period)) return new RangeError(`period must be YYYY-MM (got "${period}")`);
  return null;
}

/** Why a (trimmed) key name is refused, or null. */
export function keyNameError(name: string): string | null {
  const rule = `a key name must be 1 to ${MAX_KEY_NAME} characters, without control characters`;
  if (name === "") return `${rule}: this one is empty or only spaces`;
  if (name.length > MAX_KEY_NAME) return `${rule}: this one has ${name.length}`;
  if (hasUnsafeCharacter(name)) return `${rule}: this one holds a control character or a lone surrogate`;
  return null;
}
