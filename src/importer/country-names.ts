const names = new Intl.DisplayNames(["en"], { type: "region", fallback: "none" });

/**
 * The English name of an ISO 3166-1 alpha-2 code (CLDR's, through Intl), or null for a
 * code it does not know. Names are resolved at import time and stored in the data file,
 * so the server needs no locale data at run time.
 */
export function countryName(code: string): string | null {
  if (!/^[A-Z]{2}$/.test(code)) return null;
  try {
    return names.of(code) ?? null;
  } catch {
    return null;
  }
}
