import { Type } from "@sinclair/typebox";
import { t } from "elysia";

/**
 * The request and response shapes of /v1, as TypeBox schemas: Elysia validates bodies
 * against them and the OpenAPI document is generated from them. Extra members are
 * refused, not dropped, so a misspelt field is an error the caller sees.
 *
 * Integers are TypeBox's own `Type.Integer`: Elysia's `t.Integer` also accepts a numeric
 * string (for query strings), and the document would say "string or integer".
 */

export const LookupRequest = t.Object(
  { ip: t.String({ description: "One public IPv4 or IPv6 address as text", examples: ["1.1.1.1"] }) },
  { additionalProperties: false },
);

export const BatchRequest = t.Object(
  {
    ips: t.Array(t.String(), {
      minItems: 1,
      description: "Public IPv4 or IPv6 addresses as text; at most the plan's max_batch_size entries; duplicates allowed",
    }),
  },
  { additionalProperties: false },
);

const Nullable = <T extends Parameters<typeof t.Union>[0][number]>(schema: T) => t.Union([schema, t.Null()]);

export const LookupResultSchema = t.Object({
  ip: t.String({ description: "Canonical text of the looked-up address" }),
  version: t.Union([t.Literal(4), t.Literal(6)]),
  found: t.Boolean(),
  network: Nullable(t.String({ description: "Largest CIDR block around the address on which every other field is the same" })),
  asn: Nullable(Type.Integer()),
  as_name: Nullable(t.String()),
  country_code: Nullable(t.String({ description: "ISO 3166-1 alpha-2" })),
  country: Nullable(t.String({ description: "English name of the country" })),
  // Present when the loaded data set has the column (an imported city data set).
  city: t.Optional(Nullable(t.String())),
  region: t.Optional(Nullable(t.String({ description: "First-level subdivision: state, province, region" }))),
  postal_code: t.Optional(Nullable(t.String())),
  latitude: t.Optional(Nullable(t.Number())),
  longitude: t.Optional(Nullable(t.Number())),
  time_zone: t.Optional(Nullable(t.String({ description: "IANA time zone, e.g. Europe/Berlin" }))),
  continent_code: t.Optional(Nullable(t.String({ description: "AF, AN, AS, EU, NA, OC or SA" }))),
  continent: t.Optional(Nullable(t.String())),
});

export const BatchResultSchema = t.Object({ results: t.Array(LookupResultSchema) });

export const MeSchema = t.Object({ ip: t.String(), version: t.Union([t.Literal(4), t.Literal(6)]) });

export const UsageSchema = t.Object({
  key: t.Object({ id: t.String(), name: t.String() }),
  plan: t.Object({
    name: t.String(),
    max_batch_size: Type.Integer(),
    monthly_units: Nullable(Type.Integer()),
    rate_limit: Nullable(Type.Integer()),
  }),
  period: t.Object({ start: t.String(), end: t.String() }),
  units: t.Object({ used: Type.Integer(), limit: Nullable(Type.Integer()), remaining: Nullable(Type.Integer()) }),
});
