/**
 * Expected `privacy` members (CONTRACT §15), written out, for tests that compare whole
 * results: the true / false / null rule is what they check.
 */

/** Data with no source of any signal: every member null. */
export const NO_SIGNAL_SOURCE = { hosting: null, tor: null, vpn: null, relay: null, proxy: null, service: null } as const;

/** The default data (its one signal source, the hosting list) where the list names no AS of the address. */
export const NOT_HOSTING = { ...NO_SIGNAL_SOURCE, hosting: false } as const;

/** The default data where the hosting list names the address's AS, as `provider`'s. */
export function hostingBy(provider: string) {
  return { ...NO_SIGNAL_SOURCE, hosting: true, service: provider };
}
