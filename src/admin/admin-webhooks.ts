import type { Actor } from "../audit/audit-log.ts";
import type { Static } from "@sinclair/typebox";
import type { Deliverer } from "../events/deliverer.ts";
import { Webhooks, WebhookRefusal } from "../events/webhooks.ts";
import { ApiError } from "../errors/api-error.ts";
import { deliveryJson, testResultJson, webhookJson } from "../events/webhook-json.ts";
import { shownWebhookUrl } from "../events/webhook-url.ts";
import type { IssuedWebhook as Issued } from "../store/store.ts";
import type { AdminDelivery, AdminWebhook, IssuedWebhook, WebhookTestResult } from "./webhook-schemas.ts";

/**
 * The admin API's webhooks (CONTRACT §16): Webhooks in the API's JSON shapes, with its
 * refusals as ApiErrors (invalid_request, not_found).
 */
export class AdminWebhooks {
  private readonly webhooks: Webhooks;

  constructor(
    store: ConstructorParameters<typeof Webhooks>[0],
    now: () => Date,
    private readonly deliverer: Deliverer,
  ) {
    this.webhooks = new Webhooks(store, now);
  }

  /**
   * Every webhook. `readOnly`: for a token that may read webhooks but not manage them,
   * each URL as shownWebhookUrl shows it (its path and query may hold the receiver's
   * secret); a read-write token manages the URL and gets it whole.
   */
  async list(readOnly: boolean): Promise<Static<typeof AdminWebhook>[]> {
    const listed = (await this.webhooks.list()).map(webhookJson);
    return readOnly ? listed.map((webhook) => ({ ...webhook, url: shownWebhookUrl(webhook.url) })) : listed;
  }

  async create(actor: Actor, url: string, events: readonly string[]): Promise<Static<typeof IssuedWebhook>> {
    return issuedJson(await refusals(() => this.webhooks.add(actor, url, events)));
  }

  async remove(actor: Actor, id: string): Promise<void> {
    await refusals(() => this.webhooks.remove(actor, id));
  }

  async deliveries(id: string): Promise<Static<typeof AdminDelivery>[]> {
    return (await refusals(() => this.webhooks.deliveries(id))).map(deliveryJson);
  }

  async test(id: string): Promise<Static<typeof WebhookTestResult>> {
    const { eventId, attempt } = await refusals(() => this.webhooks.test(id, this.deliverer));
    return testResultJson(eventId, attempt);
  }
}

async function refusals<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof WebhookRefusal) throw new ApiError(error.kind === "not_found" ? "not_found" : "invalid_request", error.message);
    throw error;
  }
}

function issuedJson(issued: Issued): Static<typeof IssuedWebhook> {
  return { ...webhookJson(issued.webhook), secret: issued.secret };
}
