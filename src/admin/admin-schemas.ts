import { Type } from "@sinclair/typebox";
import { AUDIT_CURSOR_PATTERN } from "../audit/audit-log.ts";
import { MAX_NOTE, MAX_TEXT, textRule } from "../corrections/correction-rules.ts";
import { MAX_CHARACTERS } from "../http/openapi-parts.ts";

/**
 * The admin API's shapes (CONTRACT §10), as TypeBox schemas: Elysia validates bodies and
 * queries against them, and the admin OpenAPI document is generated from them. They are
 * TypeBox's own types, not Elysia's `t`: its Integer also accepts a numeric string, and
 * says so in the document. Bodies refuse members they do not know.
 */

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Time = Type.String({ format: "date-time", description: "RFC 3339, UTC" });
const Day = Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", error: "expected a day written YYYY-MM-DD", description: "A UTC day, YYYY-MM-DD", examples: ["2026-11-23"] });
/** Plans' limits: PostgreSQL keeps max_batch_size and rate_limit as 32-bit integers. */
const INT32_MAX = 2_147_483_647;

export const KeyId = Type.String({ description: "A key's id, key_…", examples: ["key_abcdefghijklmnop"] });
export const PlanName = Type.String({ description: "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", examples: ["free"] });

/** The most entries of an allowlist (see src/access/key-control-values.ts). */
const MAX_LIST = 100;
const Cidrs = Type.Array(Type.String({ maxLength: 64 }), {
  maxItems: MAX_LIST,
  description: "IPv4 or IPv6 blocks (203.0.113.0/24, 2001:db8::/32) or single addresses; the client's address (as /v1/me sees it) must lie in one. Empty or null: any address",
  examples: [["203.0.113.0/24", "2001:db8::/32"]],
});
const Origins = Type.Array(Type.String({ maxLength: 300 }), {
  maxItems: MAX_LIST,
  description: "Browser origins (scheme, host, port) a request's Origin header must be one of, each in full (a wildcard such as https://*.example.com is refused: 400 invalid_request); such a request gets Access-Control-Allow-Origin. Empty or null: no origin check, no CORS",
  examples: [["https://app.example.com"]],
});
const Metadata = Type.Object({}, { additionalProperties: true, description: "Your own JSON object, at most 1 KiB; returned as it is ({} when none)", examples: [{ team: "maps" }] });
const ExpiresAt = Type.String({ maxLength: 64, description: "RFC 3339 with an offset (2027-01-01T00:00:00Z), in the future; from then on the key answers 401 key_expired" });

export const AdminKey = Type.Object(
  {
    id: KeyId,
    name: Type.String(),
    plan: Type.String(),
    created_at: Time,
    revoked_at: Nullable(Time),
    last_used_at: Nullable({ ...Time, description: "The last lookup answered with this key (RFC 3339, UTC); null when never used" }),
    units_this_period: Type.Integer({ minimum: 0, description: "Units charged in the current period (the UTC calendar month)" }),
    expires_at: Nullable({ ...Time, description: "When the key expires (RFC 3339, UTC); null: never" }),
    allowed_cidrs: Nullable({ ...Cidrs, description: "The client addresses the key is allowed from, as canonical blocks; null: any" }),
    allowed_origins: Nullable({ ...Origins, description: "The browser origins the key is allowed from; null: any (and no CORS)" }),
    metadata: Metadata,
    grace_until: Nullable({ ...Time, description: "Until when the secret before the last rotation kept (or keeps) working; null: no grace" }),
  },
  { additionalProperties: false },
);

export const AdminKeyList = Type.Object({ keys: Type.Array(AdminKey) }, { additionalProperties: false });

export const IssuedKey = Type.Object(
  {
    id: KeyId,
    key: Type.String({ description: "The secret, ipl_…: shown only in this answer" }),
    name: Type.String(),
    plan: Type.String(),
    grace_until: Type.Optional({ ...Time, description: "After a rotation with a grace: until when the old secret keeps working" }),
  },
  { additionalProperties: false },
);

export const CreateKeyRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: "A label for the key (who or what uses it)" }),
    plan: Type.Optional({ ...PlanName, description: "The key's plan (default: free)" }),
    expires_at: Type.Optional(Nullable(ExpiresAt)),
    allowed_cidrs: Type.Optional(Nullable(Cidrs)),
    allowed_origins: Type.Optional(Nullable(Origins)),
    metadata: Type.Optional(Nullable(Metadata)),
  },
  { additionalProperties: false },
);

/** PATCH: what is given changes, what is left out stays; null (or an empty list) clears a control. */
export const SetKeyPlanRequest = Type.Object(
  {
    plan: Type.Optional(PlanName),
    expires_at: Type.Optional(Nullable(ExpiresAt)),
    allowed_cidrs: Type.Optional(Nullable(Cidrs)),
    allowed_origins: Type.Optional(Nullable(Origins)),
    metadata: Type.Optional(Nullable(Metadata)),
  },
  { additionalProperties: false },
);

export const RotateKeyRequest = Type.Object(
  { grace: Type.Optional(Type.String({ maxLength: 32, description: "How long the old secret keeps working: 24h, 90m, 7d, 1h30m (at most 30d); left out or 0s: it stops within a second", examples: ["24h"] })) },
  { additionalProperties: false },
);

/** A revocation takes nothing: its body, when one is sent, is `{}`. */
export const RevokeKeyRequest = Type.Object({}, { additionalProperties: false });

export const AuditQuery = Type.Object(
  {
    from: Type.Optional({ ...Day, description: "The first day (UTC), included; default: 29 days before `to`, but not before 0001-01-01" }),
    to: Type.Optional({ ...Day, description: "The last day (UTC), included; default: today" }),
    limit: Type.Optional(Type.String({ pattern: "^[0-9]{1,5}$", error: "expected a whole number from 1 to 10000", description: "The most entries answered, newest first: 1 to 10000 (default 1000)" })),
    before: Type.Optional(
      Type.String({
        pattern: AUDIT_CURSOR_PATTERN,
        error: "expected the next of an earlier answer, such as 2026-11-23T14:05:00.000Z_1234",
        description:
          "The next page: the `next` of the previous answer, passed back as it is (with the same from and to). The entries of the span older than the last one that answer listed; entries written since do not shift the pages",
        examples: ["2026-11-23T14:05:00.000Z_1234"],
      }),
    ),
  },
  { additionalProperties: false },
);

export const AuditEntry = Type.Object(
  {
    at: Time,
    actor: Type.String({ description: "The admin token's id (adm_…), or cli" }),
    action: Type.String({ description: "key.created, key.updated, key.rotated, key.revoked, plan.created, plan.updated, admin_token.created, admin_token.revoked, …", examples: ["key.updated"] }),
    target: Type.String({ description: "A key's or admin token's id, or plan:NAME", examples: ["key_abcdefghijklmnop"] }),
    changes: Type.Object({}, { additionalProperties: true, description: 'Field by field, {"plan": {"from": "free", "to": "standard"}}; never a secret', examples: [{ plan: { from: "free", to: "standard" } }] }),
  },
  { additionalProperties: false },
);

export const AuditList = Type.Object(
  {
    entries: Type.Array(AuditEntry, { description: "Newest first" }),
    next: Nullable(
      Type.String({
        description: "When the span holds older entries than these: pass it as `before` for the next page; null when these are the span's oldest",
        examples: ["2026-11-23T14:05:00.000Z_1234"],
      }),
    ),
  },
  { additionalProperties: false },
);

export const AdminTokenInfo = Type.Object(
  {
    id: Type.String({ description: "The admin token's id, adm_…" }),
    name: Type.String(),
    read_only: Type.Boolean({ description: "A read-only token may only read (GET, HEAD): anything else answers 403 read_only_token" }),
  },
  { additionalProperties: false },
);

export const AdminPlan = Type.Object(
  {
    name: Type.String(),
    max_batch_size: Type.Integer({ minimum: 1 }),
    monthly_units: Nullable(Type.Integer({ minimum: 1, description: "null: no unit limit" })),
    rate_limit: Nullable(Type.Integer({ minimum: 1, description: "Requests a second (the burst is one second's worth); null: no limit" })),
  },
  { additionalProperties: false },
);

export const AdminPlanList = Type.Object({ plans: Type.Array(AdminPlan) }, { additionalProperties: false });

export const PutPlanRequest = Type.Object(
  {
    max_batch_size: Type.Integer({ minimum: 1, maximum: INT32_MAX }),
    monthly_units: Nullable(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "null: no unit limit" })),
    rate_limit: Nullable(Type.Integer({ minimum: 1, maximum: INT32_MAX, description: "Requests a second; null: no limit" })),
  },
  { additionalProperties: false },
);

/**
 * The query of a GET route that takes none: any member is refused (400, naming it), as
 * the routes with a query refuse the members they do not know, so a misspelt filter
 * (`?key=` where none is read) is told, not silently ignored.
 */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const UsageQuery = Type.Object(
  {
    from: Type.Optional({ ...Day, description: "The first day (UTC), included; default: 29 days before `to`, but not before 0001-01-01" }),
    to: Type.Optional({ ...Day, description: "The last day (UTC), included; default: today" }),
    key: Type.Optional({ ...KeyId, description: "Only this key's use" }),
  },
  { additionalProperties: false },
);

export const AdminUsage = Type.Object(
  {
    from: Day,
    to: Day,
    days: Type.Array(
      Type.Object({ date: Day, requests: Type.Integer({ minimum: 0 }), units: Type.Integer({ minimum: 0 }) }, { additionalProperties: false }),
      { description: "Every day from `from` to `to`, oldest first, zeros included" },
    ),
    keys: Type.Array(
      Type.Object({ id: KeyId, name: Type.String(), requests: Type.Integer({ minimum: 1 }), units: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
      { description: "The keys with use in the span, most units first" },
    ),
  },
  { additionalProperties: false },
);

export const DataSource = Type.Object(
  {
    name: Type.String(),
    origin: Type.String({ description: "A package name, or the file's name" }),
    version: Type.String(),
    built_at: Nullable({ ...Time, description: "When the source itself was built, when it says" }),
    license: Type.String(),
    attribution: Type.String(),
    url: Type.String(),
    format: Type.String(),
    signal: Nullable({ ...Type.String(), description: "The privacy signal the source gives (a feed, the hosting list: CONTRACT §15), or null for a source of network data" }),
  },
  { additionalProperties: false },
);

export const AdminStatus = Type.Object(
  {
    version: Type.String({ description: "iplookup's version" }),
    uptime_seconds: Type.Integer({ minimum: 0 }),
    workers: Type.Integer({ minimum: 1, description: "Threads serving the public port" }),
    data: Type.Object(
      {
        data_version: Type.String({ description: "As in X-Data-Version" }),
        built_at: Time,
        sources: Type.Array(DataSource, { description: "In precedence order" }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

/**
 * Local corrections (CONTRACT §15): the fields a correction may name, each optional, null
 * making the answer say null. Their texts' limits are in characters (code points), which
 * the rule (textFault) counts; `maxLength` counts UTF-16 code units, up to two a
 * character, so a schema's bound is twice the rule's: it only stops a text no count of
 * characters could let through, and says the rule when it does. The OpenAPI document
 * states the rule's limit (MAX_CHARACTERS).
 */
const correctionText = (max: number, description: string) => Type.String({ minLength: 1, maxLength: 2 * max, [MAX_CHARACTERS]: max, error: textRule(max), description });
const CorrectionText = Nullable(correctionText(MAX_TEXT, `1 to ${MAX_TEXT} characters, without control characters`));
const CorrectionPrivacy = Type.Object(
  {
    hosting: Type.Optional(Type.Boolean()),
    tor: Type.Optional(Type.Boolean()),
    vpn: Type.Optional(Type.Boolean()),
    relay: Type.Optional(Type.Boolean()),
    proxy: Type.Optional(Type.Boolean()),
    service: Type.Optional({ ...CorrectionText, description: "The provider or service; null: none" }),
  },
  { additionalProperties: false, description: "The privacy signals to set, each from the most specific correction naming it" },
);
const correctionFields = {
  country_code: Type.Optional(
    Nullable(Type.String({ pattern: "^[A-Z]{2}$", error: "expected an ISO 3166-1 alpha-2 country code (upper case, like \"DE\")", description: "ISO 3166-1 alpha-2; `country` (and `continent`, where answered) follow it", examples: ["DE"] })),
  ),
  asn: Type.Optional(Nullable(Type.Integer({ minimum: 0, maximum: 4_294_967_295 }))),
  as_name: Type.Optional(CorrectionText),
  city: Type.Optional(CorrectionText),
  privacy: Type.Optional(CorrectionPrivacy),
};

export const CorrectionCidr = Type.String({
  description: "A CIDR block with its host bits zero, `/` written as `_` or `%2F` (192.0.2.0_24, 2001:db8::_32); a bare address is a block of one",
  examples: ["192.0.2.0_24"],
});

export const PutCorrectionRequest = Type.Object(
  { ...correctionFields, note: Type.Optional(Nullable(correctionText(MAX_NOTE, `Why, for the people who read the list: 1 to ${MAX_NOTE} characters`))) },
  { additionalProperties: false, description: "At least one field to correct; setting a block again replaces its correction whole" },
);

export const AdminCorrection = Type.Object(
  {
    cidr: Type.String({ description: "The block, canonical", examples: ["192.0.2.0/24"] }),
    ...correctionFields,
    note: Nullable(Type.String()),
    created_at: Time,
    updated_at: Time,
  },
  { additionalProperties: false, description: "The fields the correction names, and only those" },
);

export const AdminCorrectionList = Type.Object(
  { corrections: Type.Array(AdminCorrection, { description: "IPv4 first, in address order, a block before the blocks inside it" }) },
  { additionalProperties: false },
);
