const names = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });

/**
 * The English name of an ISO 3166-1 alpha-2 code (CLDR's, through Intl), or null for a
 * code it does not know. Names are resolved at import time and stored in the data file,
 * so the server needs no locale data at run time.
 */
export function countryName(code: string): string | null {
  if (!/^[A-Z]{2}$/.test(code)) return null;
  const withdrawn = WITHDRAWN_SPLIT[code];
  if (withdrawn) return withdrawn;
  try {
    return names.of(code) ?? null;
  } catch {
    return null;
  }
}

/**
 * Codes withdrawn from ISO 3166-1 (now in ISO 3166-3) for an area that became several
 * countries. CLDR names each after the first of them (AN "Curaçao", which is CW; CS
 * "Serbia"), which would make a source's AN row say Curaçao, so they keep their own
 * names. Codes withdrawn for one successor (TP, ZR, BU) keep CLDR's name, the
 * successor's, which is the same place.
 */
const WITHDRAWN_SPLIT: Readonly<Record<string, string>> = {
  AN: "Netherlands Antilles",
  CS: "Serbia and Montenegro",
  FQ: "French Southern and Antarctic Territories",
  NT: "Neutral Zone",
  PC: "Pacific Islands Trust Territory",
  SU: "Soviet Union",
  YU: "Yugoslavia",
};

/**
 * The codes ISO 3166-1 leaves to its users that sources use (QM–QZ, XA–XZ, ZZ): for
 * "unknown" (DB-IP's ZZ, others' XX) or for areas of their own, none of them a country.
 * XK stays: Kosovo's, used by every registry and data set, and named by CLDR. (AA, the
 * first of them, is used by no source and is kept as written.)
 */
const USER_ASSIGNED = /^(?:Q[M-Z]|X[A-JL-Z]|ZZ)$/;

/**
 * Codes for a group of countries, not one: AP (Asia/Pacific) and EU (Europe), which the
 * registries' delegation files and older MaxMind databases give blocks assigned for a
 * whole region; EZ (Eurozone) and UN (United Nations), which CLDR names. Corrections
 * refuse them as country codes too (country-continents.ts).
 */
const GROUPS = /^(?:AP|EU|EZ|UN)$/;

/**
 * A country code from a source, as a data set keeps it: upper case; null for a code left
 * to users that sources use (see USER_ASSIGNED) or one for a group of countries (see
 * GROUPS), so that an answer's country_code is a country's (CONTRACT §1) and "unknown"
 * or "somewhere in Europe" is null, not a country called "Unknown Region" or "European
 * Union". The caller has checked it is two letters.
 */
export function keptCountryCode(letters: string): string | null {
  const code = letters.toUpperCase();
  return USER_ASSIGNED.test(code) || GROUPS.test(code) ? null : code;
}
