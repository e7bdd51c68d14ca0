import { Type } from "@sinclair/typebox";

/**
 * The admin API's shapes (CONTRACT §10), as TypeBox schemas: Elysia validates bodies and
 * queries against them, and the admin OpenAPI document is generated from them. They are
 * TypeBox's own types, not Elysia's `t`: its Integer also accepts a numeric string, and
 * says so in the document. Bodies refuse members they do not know.
 */

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Time = Type.String({ format: "date-time", description: "RFC 3339, UTC" });
const Day = Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}$", description: "A UTC day, YYYY-MM-DD", examples: ["2026-11-23"] });
/** Plans' limits: PostgreSQL keeps max_batch_size and rate_limit as 32-bit integers. */
const INT32_MAX = 2_147_483_647;

export const KeyId = Type.String({ description: "A key's id, key_…", examples: ["key_abcdefghijklmnop"] });
export const PlanName = Type.String({ description: "1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit", examples: ["free"] });

export const AdminKey = Type.Object(
  {
    id: KeyId,
    name: Type.String(),
    plan: Type.String(),
    created_at: Time,
    revoked_at: Nullable(Time),
    last_used_at: Nullable({ ...Time, description: "The last lookup answered with this key (RFC 3339, UTC); null when never used" }),
    units_this_period: Type.Integer({ minimum: 0, description: "Units charged in the current period (the UTC calendar month)" }),
  },
  { additionalProperties: false },
);

export const AdminKeyList = Type.Object({ keys: Type.Array(AdminKey) }, { additionalProperties: false });

export const IssuedKey = Type.Object(
  { id: KeyId, key: Type.String({ description: "The secret, ipl_…: shown only in this answer" }), name: Type.String(), plan: Type.String() },
  { additionalProperties: false },
);

export const CreateKeyRequest = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200, description: "A label for the key (who or what uses it)" }),
    plan: Type.Optional({ ...PlanName, description: "The key's plan (default: free)" }),
  },
  { additionalProperties: false },
);

export const SetKeyPlanRequest = Type.Object({ plan: PlanName }, { additionalProperties: false });

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

export const UsageQuery = Type.Object(
  {
    from: Type.Optional({ ...Day, description: "The first day (UTC), included; default: 29 days before `to`" }),
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
