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
  privacy: t.Object(
    {
      hosting: Nullable(t.Boolean({ description: "A hosting or cloud provider's address (its feed, or its AS on the hosting list)" })),
      tor: Nullable(t.Boolean({ description: "A Tor exit" })),
      vpn: Nullable(t.Boolean({ description: "A VPN's address" })),
      relay: Nullable(t.Boolean({ description: "A relay's egress address (e.g. iCloud Private Relay)" })),
      proxy: Nullable(t.Boolean({ description: "An open or commercial proxy" })),
      service: Nullable(t.String({ description: "The provider or service named by the source that set hosting or relay" })),
    },
    {
      additionalProperties: false,
      description:
        "Privacy and hosting signals (CONTRACT §15): a signal is true when a source of it in the data covers the address, false when the data has a source of it and none covers the address, null when the data has no source of it",
    },
  ),
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

/** GET /v1/asn/{asn} (CONTRACT §14). */
export const AsnResultSchema = t.Object({
  asn: Type.Integer({ minimum: 0, maximum: 4294967295 }),
  found: t.Boolean({ description: "Whether the loaded data answers this AS for any address" }),
  name: Nullable(t.String({ description: "The AS name, as lookups answer it" })),
  country_code: Nullable(t.String({ description: "ISO 3166-1 alpha-2: the country of most of the AS's IPv4 addresses (IPv6 when none has one)" })),
  country: Nullable(t.String({ description: "English name of the country" })),
  hosting: Nullable(t.Boolean({ description: "Whether the data's list of hosting and cloud providers' AS numbers names the AS; null when the data was built without such a list (hosting feeds by address block answer lookups, not this)" })),
  num_ips: Type.Integer({ minimum: 0, description: "The IPv4 addresses of `prefixes`" }),
  prefixes: t.Array(t.String(), { description: "The fewest IPv4 CIDR blocks covering exactly the addresses whose lookup answers this AS, in address order" }),
  prefixes6: t.Array(t.String(), { description: "The same for IPv6" }),
});

export const AsnSummarySchema = t.Object({
  asn: Type.Integer({ minimum: 0, maximum: 4294967295 }),
  name: Nullable(t.String()),
  country_code: Nullable(t.String({ description: "ISO 3166-1 alpha-2" })),
  num_ips: Type.Integer({ minimum: 0, description: "IPv4 addresses" }),
});

/** GET /v1/asn?q=TEXT: at most 50, most IPv4 addresses first. */
export const AsnSearchSchema = t.Object({ results: t.Array(AsnSummarySchema, { maxItems: 50 }) });

/**
 * The query of GET /v1/asn. `q` is checked by the AS service (1 to 64 characters, as
 * code points); the schema refuses other parameters and says what the document shows.
 */
export const AsnSearchQuery = t.Object(
  { q: t.Optional(t.String({ description: "1 to 64 characters: a part of the AS name (any case) or the start of the number (AS allowed before it)", examples: ["cloudflare"] })) },
  { additionalProperties: false },
);
