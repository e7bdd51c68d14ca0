/**
 * The admin API's answers as the console reads them: the types of the server's own
 * schemas (admin-schemas.ts, webhook-schemas.ts), so that a change to an answer fails the
 * console's type check instead of the page. Types only: nothing of TypeBox or of the
 * schemas reaches the bundle.
 */
import type { Static } from "@sinclair/typebox";
import type * as Admin from "../admin-schemas.ts";
import type * as Hooks from "../webhook-schemas.ts";

export type Key = Static<typeof Admin.AdminKey>;
export type IssuedKey = Static<typeof Admin.IssuedKey>;
export type Plan = Static<typeof Admin.AdminPlan>;
export type Usage = Static<typeof Admin.AdminUsage>;
export type Status = Static<typeof Admin.AdminStatus>;
/** `changes` is an open object in the schema: field by field, what it was and became. */
export type AuditEntry = Omit<Static<typeof Admin.AuditEntry>, "changes"> & { readonly changes: Readonly<Record<string, unknown>> };
export type Webhook = Static<typeof Hooks.AdminWebhook>;
export type IssuedWebhook = Static<typeof Hooks.IssuedWebhook>;
export type Delivery = Static<typeof Hooks.AdminDelivery>;
export type WebhookTestResult = Static<typeof Hooks.WebhookTestResult>;
