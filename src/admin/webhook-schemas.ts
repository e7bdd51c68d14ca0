import { Type } from "@sinclair/typebox";
import { EVENT_TYPES } from "../events/event-names.ts";

/** The admin API's webhook shapes (CONTRACT §16), as admin-schemas.ts has the others. */

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);
const Time = Type.String({ format: "date-time", description: "RFC 3339, UTC" });

export const WebhookId = Type.String({ description: "A webhook's id, wh_…", examples: ["wh_abcdefghijklmnop"] });
const EventName = Type.String({ description: `One of: ${EVENT_TYPES.join(", ")}`, examples: ["usage.threshold"] });

const DELIVERED_TO = "Where deliveries are POSTed (http:// or https://)";

export const AdminWebhook = Type.Object(
  {
    id: WebhookId,
    url: Type.String({
      description: `${DELIVERED_TO}. A read-only token gets it shortened to its origin, with "/…" in place of any path or query (either may hold the receiver's secret): https://hooks.example.com/…`,
    }),
    events: Type.Array(EventName, { description: "The events it receives" }),
    created_at: Time,
  },
  { additionalProperties: false },
);

export const AdminWebhookList = Type.Object({ webhooks: Type.Array(AdminWebhook) }, { additionalProperties: false });

export const IssuedWebhook = Type.Object(
  {
    ...AdminWebhook.properties,
    // Only a read-write token registers a webhook: it gets the URL whole.
    url: Type.String({ description: DELIVERED_TO }),
    secret: Type.String({ description: "The signing secret, whsec_… (Standard Webhooks): shown only in this answer" }),
  },
  { additionalProperties: false },
);

export const CreateWebhookRequest = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2000, description: "http:// or https://, any host (loopback included); no credentials, no fragment" }),
    events: Type.Array(Type.String({ maxLength: 64 }), { minItems: 1, maxItems: 32, description: `Some of: ${EVENT_TYPES.join(", ")}` }),
  },
  { additionalProperties: false },
);

export const DeliveryAttempt = Type.Object(
  {
    attempt: Type.Integer({ minimum: 1 }),
    at: Time,
    status: Nullable(Type.Integer({ description: "The receiver's HTTP status; null when it did not answer" })),
    duration_ms: Type.Integer({ minimum: 0 }),
    response: Nullable(Type.String({ description: "The first 256 bytes of the answer's body" })),
    error: Nullable(Type.String({ description: "Why there was no answer (refused, timed out, …)" })),
  },
  { additionalProperties: false },
);

const DeliveryState = Type.Union([Type.Literal("pending"), Type.Literal("delivered"), Type.Literal("failed")], {
  description: "pending: to be tried (again) at next_attempt_at; delivered: answered 2xx; failed: given up 24 hours after the event",
});

export const AdminDelivery = Type.Object(
  {
    id: Type.Integer(),
    event_id: Type.String({ description: "msg_…, sent as webhook-id" }),
    event_type: Type.String(),
    created_at: { ...Time, description: "When the event happened" },
    state: DeliveryState,
    next_attempt_at: Nullable(Time),
    attempts: Type.Array(DeliveryAttempt, { description: "Oldest first" }),
  },
  { additionalProperties: false },
);

export const AdminDeliveryList = Type.Object({ deliveries: Type.Array(AdminDelivery, { description: "The latest 50, newest first" }) }, { additionalProperties: false });

/** A test event takes nothing: its body, when one is sent, is `{}`. */
export const TestWebhookRequest = Type.Object({}, { additionalProperties: false });

export const WebhookTestResult = Type.Object(
  {
    event_id: Type.String(),
    attempt: Nullable(
      Type.Object(
        { ...DeliveryAttempt.properties, at: Type.Optional(Time), state: DeliveryState },
        { additionalProperties: false, description: "The attempt made at once; null when another server took it first" },
      ),
    ),
  },
  { additionalProperties: false },
);
