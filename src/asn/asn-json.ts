/**
 * The JSON of the AS endpoints, as types only: the console's browser script imports
 * them too, so this file imports nothing (no Bun types reach the browser's check).
 */

/** What GET /v1/asn/{asn} answers (CONTRACT §14). */
export interface AsnResult {
  readonly asn: number;
  readonly found: boolean;
  readonly name: string | null;
  readonly country_code: string | null;
  readonly country: string | null;
  readonly hosting: boolean | null;
  /** The IPv4 addresses of `prefixes`. */
  readonly num_ips: number;
  readonly prefixes: readonly string[];
  readonly prefixes6: readonly string[];
}

/** One entry of GET /v1/asn?q= (CONTRACT §14). */
export interface AsnSummary {
  readonly asn: number;
  readonly name: string | null;
  readonly country_code: string | null;
  readonly num_ips: number;
}
