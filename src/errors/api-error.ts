/**
 * The contract's error model (CONTRACT §3) as plain data, free of any HTTP framework:
 * domain code throws ApiError; the HTTP layer turns it into problem+json in one place.
 */

/** Every error code of the contract with its HTTP status. */
export const ERROR_STATUS = {
  invalid_json: 400,
  invalid_request: 400,
  invalid_address: 400,
  address_not_public: 400,
  invalid_asn: 400,
  asn_not_public: 400,
  missing_key: 401,
  invalid_key: 401,
  key_expired: 401,
  address_not_allowed: 403,
  origin_not_allowed: 403,
  read_only_token: 403,
  not_found: 404,
  method_not_allowed: 405,
  batch_too_large: 413,
  payload_too_large: 413,
  unsupported_media_type: 415,
  quota_exceeded: 429,
  rate_limited: 429,
  internal_error: 500,
  store_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** One bad entry of a lookup request; `index` is its position in `ips` (0 for a single lookup). */
export interface EntryError {
  readonly index: number;
  readonly value: string;
  readonly code: "invalid_address" | "address_not_public";
  readonly reason?: string;
}

/** A refusal in the contract's terms. `extra` members are added to the problem body as they are. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    readonly detail: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
    /** Response headers the error needs (`Allow`, `Retry-After`, `WWW-Authenticate`). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(detail);
    this.status = ERROR_STATUS[code];
  }
}

/** The error for a request with bad entries: the top-level code is that of the first bad entry. */
export function addressError(entries: readonly EntryError[], total: number): ApiError {
  const first = entries[0];
  if (!first) throw new Error("addressError needs at least one entry");
  const noun = total === 1 ? "entry" : "entries";
  const detail =
    entries.length === 1 && total === 1
      ? first.code === "invalid_address"
        ? `"${shorten(first.value)}" is not an IP address in an accepted text form`
        : `${first.value} is not a supported public address (${first.reason})`
      : `${entries.length} of ${total} ${noun} ${entries.length === 1 ? "is not a supported public address" : "are not supported public addresses"}`;
  return new ApiError(first.code, detail, { errors: entries });
}

/** Keeps an echoed value readable: a detail line never carries a whole request body. */
function shorten(value: string): string {
  return value.length <= 64 ? value : `${value.slice(0, 61)}...`;
}
