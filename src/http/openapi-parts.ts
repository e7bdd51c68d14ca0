import { ERROR_STATUS, type ErrorCode } from "../errors/api-error.ts";

/**
 * The pieces both OpenAPI documents are built from (the public one, openapi.ts, and the
 * admin one, src/admin/admin-openapi.ts): the problem details schema, error answers that
 * list exactly the codes an operation can give, and the response headers.
 */

/** What each code means, for the documents' descriptions (CONTRACT §3). */
const CODE_MEANING: Record<ErrorCode, string> = {
  invalid_json: "the body is not JSON (or not UTF-8)",
  invalid_request: "JSON of the wrong shape, a value out of range, or a query parameter that is not valid percent-encoding (UTF-8)",
  invalid_address: "an entry is not an address in an accepted text form",
  address_not_public: "an entry is private, local, reserved, multicast, …",
  invalid_asn: "not an AS number: 0–4294967295 in decimal, alone or after AS, no sign, no leading zeros",
  asn_not_public: "an AS number of the IANA special-purpose registry (private use, documentation, reserved, AS_TRANS); `reason` names it",
  missing_key: "no Authorization: Bearer header",
  invalid_key: "an unknown, malformed or revoked key (or a rotated key's old secret past its grace)",
  key_expired: "the key is past its expires_at",
  address_not_allowed: "the client's address is outside the key's allowed_cidrs",
  origin_not_allowed: "the request's Origin is not one of the key's allowed_origins",
  read_only_token: "a read-only admin token may only read (GET, HEAD)",
  not_found: "no such route",
  method_not_allowed: "another method than this path answers (Allow lists them)",
  batch_too_large: "more entries than the plan's max_batch_size",
  payload_too_large: "a body over the size limit",
  unsupported_media_type: "a body that is not application/json, or one sent with a Content-Encoding other than identity (bodies are accepted unencoded only; Accept-Encoding: identity says so)",
  quota_exceeded: "more units than the key has left this period; nothing is charged",
  rate_limited: "over the request rate (Retry-After says when to try again)",
  internal_error: "a bug; the body carries no internals",
  store_unavailable: "the state store cannot be reached; nothing is charged (Retry-After)",
};

export const ProblemSchema = {
  type: "object",
  description: "RFC 9457 problem details, with the contract's error code",
  required: ["type", "title", "status", "code", "detail"],
  properties: {
    type: { type: "string", examples: ["about:blank"] },
    title: { type: "string" },
    status: { type: "integer" },
    code: { type: "string", enum: Object.keys(ERROR_STATUS) },
    detail: { type: "string" },
    errors: {
      type: "array",
      description: "Every bad entry of the request (invalid_address, address_not_public)",
      items: {
        type: "object",
        required: ["index", "value", "code"],
        properties: {
          index: { type: "integer" },
          value: { type: "string" },
          code: { type: "string", enum: ["invalid_address", "address_not_public"] },
          reason: { type: "string", description: "With address_not_public: the block's kebab-case name (private-use, loopback, …)" },
        },
      },
    },
    reason: { type: "string", description: "With asn_not_public: the registry entry's kebab-case name (private-use, documentation, reserved, as-trans)" },
    max_batch_size: { type: "integer", description: "With batch_too_large" },
    max_body_bytes: { type: "integer", description: "With payload_too_large" },
    retry_after: { type: "integer", description: "With rate_limited and store_unavailable: seconds, as in Retry-After" },
    units_requested: { type: "integer", description: "With quota_exceeded" },
    units_remaining: { type: ["integer", "null"], description: "With quota_exceeded" },
    period_end: { type: "string", format: "date-time", description: "With quota_exceeded: when the period ends" },
  },
} as const;

/** Response headers, for `components.headers`. */
export const HEADERS = {
  "X-Request-Id": {
    description: "The request's id, as in the access log: the one sent in X-Request-Id when it is sane (1 to 128 of A-Z a-z 0-9 . _ : -), else a new one",
    required: true,
    schema: { type: "string" },
  },
  "X-Units-Consumed": { description: "Units this request cost", required: true, schema: { type: "integer", minimum: 0 } },
  "X-Units-Remaining": { description: "Units left this period; only on a plan with a unit limit", schema: { type: "integer", minimum: 0 } },
  "X-Data-Version": { description: "The version of the data that answered (as in /readyz and data info)", required: true, schema: { type: "string" } },
  "WWW-Authenticate": { description: "Bearer realm, with error=\"invalid_token\" for invalid_key", required: true, schema: { type: "string" } },
  Allow: { description: "The methods the path answers", required: true, schema: { type: "string" } },
  "Retry-After": { description: "Seconds to wait before trying again", required: true, schema: { type: "integer", minimum: 0 } },
  "Accept-Encoding": {
    description: "With a 415 for a body sent with a Content-Encoding: the content codings a request body may have, identity (none) alone (RFC 9110 §15.5.16)",
    schema: { type: "string", enum: ["identity"] },
  },
} as const;

type HeaderName = keyof typeof HEADERS;

export const headerRef = (name: HeaderName) => ({ $ref: `#/components/headers/${name}` });

/** The headers of every answer, and those an answer of a status carries besides. */
function errorHeaders(status: number, codes: readonly ErrorCode[]) {
  const headers: Record<string, { $ref: string }> = { "X-Request-Id": headerRef("X-Request-Id") };
  if (status === 401) headers["WWW-Authenticate"] = headerRef("WWW-Authenticate");
  if (status === 405) headers.Allow = headerRef("Allow");
  if (status === 415) headers["Accept-Encoding"] = headerRef("Accept-Encoding");
  // Only these two codes carry Retry-After; with quota_exceeded beside rate_limited it is not always there.
  if (codes.length === 1 && (codes[0] === "rate_limited" || codes[0] === "store_unavailable")) headers["Retry-After"] = headerRef("Retry-After");
  return headers;
}

/**
 * Error answers of an operation: for each status, exactly the codes it can answer with,
 * in the description and as the `code` enum of its schema.
 */
export function errorResponses(...codes: readonly ErrorCode[]) {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: list.map((code) => `${code}: ${CODE_MEANING[code]}`).join("; "),
        headers: errorHeaders(status, list),
        content: {
          "application/problem+json": {
            schema: { allOf: [{ $ref: "#/components/schemas/Problem" }, { type: "object", properties: { code: { enum: list } } }] },
          },
        },
      },
    ]),
  );
}

/** The answer of a path that exists when it is asked for with another method. */
export const METHOD_NOT_ALLOWED = () => errorResponses("method_not_allowed");

/** `components.responses.NotFound`: what any path outside a document answers. */
export const NOT_FOUND_RESPONSE = {
  description: "not_found: any path that is not in this document",
  headers: { "X-Request-Id": headerRef("X-Request-Id") },
  content: {
    "application/problem+json": { schema: { allOf: [{ $ref: "#/components/schemas/Problem" }, { type: "object", properties: { code: { const: "not_found" } } }] } },
  },
};

/**
 * TypeBox schemas are JSON Schema; strip TypeBox's symbol keys by a JSON round trip, and
 * a schema's `error` (the message a refusal gives, see src/http/validation-detail.ts),
 * which is not JSON Schema. A string schema's `maxCharacters` (see MAX_CHARACTERS) is
 * published as its `maxLength`: JSON Schema counts characters where TypeBox counts
 * UTF-16 code units.
 */
export const plain = (schema: unknown) =>
  JSON.parse(
    JSON.stringify(schema, function (this: Record<string, unknown>, key, value) {
      if (key === "error" && typeof value === "string" && "type" in this) return undefined;
      if (key === MAX_CHARACTERS) return undefined;
      if (key === "maxLength" && typeof this[MAX_CHARACTERS] === "number") return this[MAX_CHARACTERS];
      return value;
    }),
  ) as Record<string, unknown>;

/**
 * The keyword of a string schema whose limit is in characters (code points): its
 * `maxLength`, which TypeBox checks in UTF-16 code units, is set loose (two a character)
 * and a rule of the domain counts the characters; the document states the characters.
 */
export const MAX_CHARACTERS = "maxCharacters";

/** A JSON body of a component schema. */
export const jsonOf = (name: string) => ({ "application/json": { schema: { $ref: `#/components/schemas/${name}` } } });
