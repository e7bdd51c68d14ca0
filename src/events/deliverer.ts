import type { Logger } from "../log/logger.ts";
import type { AttemptResult, DeliveryState, DueDelivery, Store } from "../store/store.ts";
import { nextAttemptAt } from "./retry-schedule.ts";
import { ATTEMPT_TIMEOUT_MS, sendMessage, type SendOutcome } from "./send.ts";

/** How often a running server looks for due deliveries. */
export const POLL_MS = 1000;
/** The most deliveries one pass (deliverDue) claims and sends at once. */
export const BATCH = 16;
/** The most attempts a running deliverer has in flight at once, of every webhook. */
export const MAX_IN_FLIGHT = 64;
/**
 * The most of them one webhook may hold: a receiver that never answers ties up this many
 * for ATTEMPT_TIMEOUT_MS at a time, and the other webhooks' deliveries go out meanwhile.
 */
export const PER_WEBHOOK = 16;
/**
 * How long a claim holds. Longer than an attempt can take (ATTEMPT_TIMEOUT_MS) with a
 * wide margin, so no other server takes over a delivery still being sent; a server that
 * dies with claims leaves them to the others after this.
 */
export const LEASE_MS = 6 * ATTEMPT_TIMEOUT_MS;
const RECORD_RETRY_MS = 20;
const RECORD_TRIES_FOR_MS = 2000;

export interface DelivererOptions {
  readonly store: Store;
  /** The wall clock, ms since the epoch (injected in tests to step through the backoff). */
  readonly now?: () => number;
  readonly logger?: Logger;
  /** Sends one message (injected only to count or delay sends in tests). */
  readonly send?: typeof sendMessage;
  readonly timeoutMs?: number;
  /** Hears of each attempt's outcome: the delivery's state after it (for /metrics). */
  readonly onAttempt?: (state: DeliveryState) => void;
}

/** What one attempt came to, as the deliverer records it. */
export interface AttemptReport extends SendOutcome {
  readonly deliveryId: number;
  readonly webhookId: string;
  readonly eventId: string;
  readonly attempt: number;
  readonly state: DeliveryState;
}

/**
 * Sends what the outbox holds: claims due deliveries from the store (a lease, so servers
 * sharing it never send one at the same time), signs and POSTs each, and records the
 * attempt with the delivery's next state: `delivered` on a 2xx answer, else `pending`
 * again at the next time of the retry schedule, or `failed` once 24 hours have passed.
 * It runs on a timer of serve's main thread, never on a request's path: a lookup's answer
 * never waits for a webhook.
 *
 * Running (start), it keeps up to MAX_IN_FLIGHT attempts going and claims more as each
 * ends, never more than PER_WEBHOOK of one webhook: a receiver that never answers holds
 * its share of the slots until its attempts time out, and neither the other webhooks'
 * deliveries nor its own retries wait for a batch it is part of to finish.
 *
 * Log lines name the webhook, the event and the outcome, never a URL, a body or a secret.
 */
export class Deliverer {
  private readonly now: () => number;
  private readonly send: typeof sendMessage;
  private timer: ReturnType<typeof setInterval> | undefined;
  private stopped = false;
  /** Aborted by stop(): cuts short the attempts under way. */
  private readonly stopping = new AbortController();
  /** The attempts under way (start), and how many of each webhook's. */
  private readonly attempts = new Set<Promise<void>>();
  private readonly inFlight = new Map<string, number>();
  /** The claim under way; another is wanted once it ends (a slot came free meanwhile). */
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  /** When the store's failure was last logged (performance.now()): once a minute is enough. */
  private lastWarning = -Infinity;

  constructor(private readonly options: DelivererOptions) {
    this.now = options.now ?? Date.now;
    this.send = options.send ?? sendMessage;
  }

  /** One pass: claims what is due (of one event only, with `eventId`), sends it, records it. */
  async deliverDue(eventId?: string): Promise<AttemptReport[]> {
    const due = await this.options.store.webhooks.claimDeliveries({ limit: BATCH, nowMs: this.now(), leaseMs: LEASE_MS, eventId });
    const reports = await Promise.all(due.map((delivery) => this.attempt(delivery)));
    return reports.filter((report) => report !== null);
  }

  /** Sends a delivery and records the attempt; null when stop() cut it short. */
  private async attempt(delivery: DueDelivery): Promise<AttemptReport | null> {
    const startedMs = this.now();
    const outcome = await this.send({ url: delivery.url, secret: delivery.secret, id: delivery.eventId, body: delivery.body }, startedMs, this.options.timeoutMs, this.stopping.signal);
    // Cut short by stop() before an answer: not recorded, neither as a failure (the
    // receiver did nothing wrong) nor as anything else (an attempt recorded counts
    // towards the schedule). Its lease runs out and a server sends it again, as after a
    // crash (at least once).
    if (outcome.status === null && this.stopping.signal.aborted) return null;
    const delivered = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
    const next = delivered ? null : nextAttemptAt(delivery.attempt, this.now(), Date.parse(delivery.eventCreatedAt));
    const state: DeliveryState = delivered ? "delivered" : next === null ? "failed" : "pending";
    await this.record({
      deliveryId: delivery.deliveryId,
      attempt: delivery.attempt,
      at: new Date(startedMs).toISOString(),
      status: outcome.status,
      durationMs: outcome.durationMs,
      response: outcome.response,
      error: outcome.error,
      state,
      nextAttemptAt: next,
    });
    this.options.onAttempt?.(state);
    const fields = {
      webhook_id: delivery.webhookId,
      event_id: delivery.eventId,
      event_type: delivery.eventType,
      attempt: delivery.attempt,
      status: outcome.status,
      error: outcome.error,
      duration_ms: Math.round(outcome.durationMs),
      ...(next !== null ? { next_attempt_at: new Date(next).toISOString() } : {}),
    };
    if (delivered) this.options.logger?.log("info", "webhook delivered", fields);
    else this.options.logger?.log(state === "failed" ? "error" : "warn", state === "failed" ? "webhook delivery given up after 24 hours" : "webhook delivery failed; will retry", fields);
    return { ...outcome, deliveryId: delivery.deliveryId, webhookId: delivery.webhookId, eventId: delivery.eventId, attempt: delivery.attempt, state };
  }

  /**
   * Records an attempt; a SQLite state file locked for a moment by a writer (the
   * deliverer's connection never waits for the lock on the thread) is tried again for up
   * to two seconds, so that a delivery made is seldom sent again for want of its record.
   */
  private async record(result: AttemptResult): Promise<void> {
    for (let waited = 0; ; waited += RECORD_RETRY_MS) {
      try {
        await this.options.store.webhooks.recordAttempt(result);
        return;
      } catch (error) {
        if ((error as { code?: unknown })?.code !== "SQLITE_BUSY" || waited >= RECORD_TRIES_FOR_MS) throw error;
        await Bun.sleep(RECORD_RETRY_MS);
      }
    }
  }

  /** Looks for due deliveries every `everyMs`, and as soon as an attempt ends. */
  start(everyMs = POLL_MS): void {
    this.timer = setInterval(() => this.fill(), everyMs);
    this.timer.unref?.();
    this.fill();
  }

  /** Claims due deliveries for the free slots and starts their attempts; one claim at a time. */
  private fill(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.claimAgain = true;
      return;
    }
    this.claiming = this.claimFree()
      .catch((error) => this.warn(error))
      .finally(() => {
        this.claiming = undefined;
        if (!this.claimAgain) return;
        this.claimAgain = false;
        this.fill();
      });
  }

  private async claimFree(): Promise<void> {
    for (;;) {
      const free = MAX_IN_FLIGHT - this.attempts.size;
      if (free <= 0 || this.stopped) return;
      const due = await this.options.store.webhooks.claimDeliveries({
        limit: free,
        nowMs: this.now(),
        leaseMs: LEASE_MS,
        perWebhook: { limit: PER_WEBHOOK, inFlight: Object.fromEntries(this.inFlight) },
      });
      // Stopped meanwhile: the claims' leases run out and a server sends them later.
      if (this.stopped) return;
      let capped = false;
      for (const delivery of due) capped = this.begin(delivery) >= PER_WEBHOOK || capped;
      // Only a webhook that reached its share can have left due deliveries unclaimed
      // with slots free: claim again without it.
      if (!capped || due.length === free) return;
    }
  }

  /** Starts an attempt in a slot; answers how many its webhook has in flight now. */
  private begin(delivery: DueDelivery): number {
    const held = (this.inFlight.get(delivery.webhookId) ?? 0) + 1;
    this.inFlight.set(delivery.webhookId, held);
    const attempt: Promise<void> = this.attempt(delivery)
      .then(
        () => {},
        (error) => this.warn(error),
      )
      .finally(() => {
        this.attempts.delete(attempt);
        const left = this.inFlight.get(delivery.webhookId)! - 1;
        if (left > 0) this.inFlight.set(delivery.webhookId, left);
        else this.inFlight.delete(delivery.webhookId);
        this.fill();
      });
    this.attempts.add(attempt);
    return held;
  }

  /** A claim or a record that failed: the next one tries again. */
  private warn(error: unknown): void {
    // A state file locked for a moment by a writer: simply the next claim.
    if ((error as { code?: unknown })?.code === "SQLITE_BUSY" || this.stopped) return;
    // A database that is away fails every claim: one line a minute says so.
    if (performance.now() - this.lastWarning < 60_000) return;
    this.lastWarning = performance.now();
    this.options.logger?.log("warn", "webhook deliveries could not be read or recorded in the state store; trying again every second", { error: String((error as Error)?.message ?? error) });
  }

  /**
   * Stops the timer, cuts short the attempts waiting for an answer, and waits for the
   * rest (an answer being recorded) at most `graceMs`: a server stops promptly even
   * while a receiver is slow. An attempt cut short is not recorded; its lease runs out
   * and a server sends it again (at least once).
   */
  async stop(graceMs = 300): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.stopping.abort();
    await Promise.race([Promise.allSettled([this.claiming, ...this.attempts]), Bun.sleep(graceMs)]);
  }
}
