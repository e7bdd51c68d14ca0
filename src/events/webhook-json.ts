import type { DeliveryRecord, Webhook } from "../store/store.ts";
import type { TestAttempt } from "./webhooks.ts";

/**
 * Webhooks, their deliveries and a test's outcome as the admin API and `iplookup webhooks
 * … --json` show them: one shape for both, snake_case as every JSON of iplookup's, never
 * a signing secret (only the answer that creates a webhook adds it).
 */
export function webhookJson(webhook: Webhook) {
  return { id: webhook.id, url: webhook.url, events: [...webhook.events], created_at: webhook.createdAt };
}

export function deliveryJson(delivery: DeliveryRecord) {
  return {
    id: delivery.id,
    event_id: delivery.eventId,
    event_type: delivery.eventType,
    created_at: delivery.createdAt,
    state: delivery.state,
    next_attempt_at: delivery.nextAttemptAt,
    attempts: delivery.attempts.map((a) => ({ attempt: a.attempt, at: a.at, status: a.status, duration_ms: a.durationMs, response: a.response, error: a.error })),
  };
}

/** A test event: the attempt made at once, or null when another server took it first. */
export function testResultJson(eventId: string, attempt: TestAttempt | null) {
  return {
    event_id: eventId,
    attempt: attempt && {
      attempt: attempt.attempt,
      status: attempt.status,
      duration_ms: Math.round(attempt.durationMs),
      response: attempt.response,
      error: attempt.error,
      state: attempt.state,
    },
  };
}
