/**
 * Local corrections (CONTRACT §15): an operator's fix of what the data says about a
 * block of addresses, kept in the state store and laid over every lookup.
 */

import type { Generation } from "../store/store.ts";

/** The privacy signals a correction may set (CONTRACT §15's `privacy` object, in part). */
export const PRIVACY_SIGNALS = ["hosting", "tor", "vpn", "relay", "proxy"] as const;
export type PrivacySignal = (typeof PRIVACY_SIGNALS)[number];

/** A correction's `privacy`: the signals it sets, and the service it names. */
export type CorrectionPrivacy = { readonly [S in PrivacySignal]?: boolean } & { readonly service?: string | null };

/**
 * The fields a correction overrides. A key left out is not corrected; a key with null
 * makes the answer say null (the data's value was wrong and there is no right one).
 */
export interface CorrectionFields {
  readonly country_code?: string | null;
  readonly asn?: number | null;
  readonly as_name?: string | null;
  readonly city?: string | null;
  readonly privacy?: CorrectionPrivacy;
}

/**
 * The corrected fields that hold at an address under nested corrections: each field from
 * the most specific block naming it, and `privacy` as each block names it, outermost
 * first, laid over the data's in turn (correctedPrivacy): a block's rule for `service`
 * sees the signals as the blocks around it left them.
 */
export interface LayeredFields extends Omit<CorrectionFields, "privacy"> {
  readonly privacy?: readonly CorrectionPrivacy[];
}

/** The fields a correction can name, in the order the API writes them. */
export const CORRECTION_FIELDS = ["country_code", "asn", "as_name", "city", "privacy"] as const;

/** A correction as the store keeps it. */
export interface Correction {
  /** The block, canonical: network address with its host bits zero, `/`, prefix (`192.0.2.0/24`, `2001:db8::/32`). */
  readonly cidr: string;
  readonly fields: CorrectionFields;
  readonly note: string | null;
  /** ISO 8601 UTC. */
  readonly createdAt: string;
  /** ISO 8601 UTC: the last time the block's correction was set. */
  readonly updatedAt: string;
}

/** The corrections and the store's change counter they were read with, from one snapshot. */
export interface CorrectionSnapshot {
  readonly generation: Generation;
  readonly corrections: readonly Correction[];
}
