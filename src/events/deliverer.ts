import type { Logger } from "../log/logger.ts";
import { isUnavailable } from "../store/postgres-unavailable.ts";
import { StateFileChangedError } from "../store/state-file-identity.ts";
import { StoreUnavailableError, type AttemptResult, type DeliveryState, type DueDelivery, type Store } from "../store/store.ts";
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
/** The first pause before an attempt's record is tried again; it doubles up to RECORD_RETRY_MAX_MS. */
const RECORD_RETRY_MS = 20;
const RECORD_RETRY_MAX_MS = 1000;

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
 * It runs on a timer of serve's events thread (see serve/events.ts), never on a request's
 * path: a lookup's answer never waits for a webhook.
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
  /** A refill() waits for the next turn of the event loop. */
  private refillQueued = false;
  /** When the store's failure was last logged (performance.now()): once a minute is enough. */
  private lastWarning = -Infinity;

  constructor(private readonly options: DelivererOptions) {
    this.now = options.now ?? Date.now;
    this.send = options.send ?? sendMessage;
  }

  /** One pass: claims what is due (of one event only, with `eventId`), sends it, records it. */
  async deliverDue(eventId?: string): Promise<AttemptReport[]> {
    const claimedMs = this.now();
    const due = await this.options.store.webhooks.claimDeliveries({ limit: BATCH, nowMs: claimedMs, leaseMs: LEASE_MS, eventId });
    const reports = await Promise.all(due.map((delivery) => this.attempt(delivery, claimedMs + LEASE_MS)));
    return reports.filter((report) => report !== null);
  }

  /**
   * Sends a delivery and records the attempt; null when stop() cut it short. The claim
   * holds the delivery until `leaseEndsMs` (the wall clock, as `now`).
   */
  private async attempt(delivery: DueDelivery, leaseEndsMs: number): Promise<AttemptReport | null> {
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
    await this.record(leaseEndsMs, {
      deliveryId: delivery.deliveryId,
      eventId: delivery.eventId,
      webhookId: delivery.webhookId,
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
   * Records an attempt. A record the store cannot take now (a SQLite state file locked for
   * a moment by a writer, the deliverer's connection never waiting for the lock on the
   * thread; a PostgreSQL connection that broke, the database restarting or away for a
   * while) is tried again, with a backoff, for as long as the claim holds the delivery:
   * until `leaseEndsMs`, when another server may claim it and send it again, or until
   * stop(). Without its record, a delivery made (a 2xx) would be sent again once the lease
   * has run out. Trying again is safe: recordAttempt writes only while the delivery is
   * still at the attempt before this one, so a record that was committed although its
   * answer was lost is not written twice.
   */
  private async record(leaseEndsMs: number, result: AttemptResult): Promise<void> {
    for (let pause = RECORD_RETRY_MS; ; pause = Math.min(pause * 2, RECORD_RETRY_MAX_MS)) {
      const leftMs = leaseEndsMs - this.now();
      let error: unknown;
      try {
        // One try at most until the lease ends: a connection gone silent does not hold the
        // delivery's slot past it.
        const recorded = await untilLater(this.options.store.webhooks.recordAttempt(result), leftMs);
        if (recorded !== timedOut) return;
        error = new StoreUnavailableError(`the state store did not record the attempt before the delivery's lease ran out`);
      } catch (failed) {
        error = failed;
      }
      if (!recordable(error) || this.stopping.signal.aborted || this.now() + pause >= leaseEndsMs) throw error;
      await pauseUnlessStopped(pause, this.stopping.signal);
    }
  }

  /** Looks for due deliveries every `everyMs`, and as soon as an attempt ends. */
  start(everyMs = POLL_MS): void {
    this.timer = setInterval(() => this.fill(), everyMs);
    this.timer.unref?.();
    this.fill();
  }

  /**
   * fill() once the attempts ending in this turn of the event loop have all ended: one
   * claim for the slots they free, not one claim each, and after the thread has turned.
   * The deliverer shares its thread with serving: attempts that end together (a fan-out
   * to fast receivers) would otherwise chain a claim transaction per attempt in one
   * stretch of promise callbacks, and the thread answered no request until it ended.
   */
  private refill(): void {
    if (this.refillQueued) return;
    this.refillQueued = true;
    setImmediate(() => {
      this.refillQueued = false;
      this.fill();
    });
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
      const claimedMs = this.now();
      const due = await this.options.store.webhooks.claimDeliveries({
        limit: free,
        nowMs: claimedMs,
        leaseMs: LEASE_MS,
        perWebhook: { limit: PER_WEBHOOK, inFlight: Object.fromEntries(this.inFlight) },
      });
      // Stopped meanwhile: the claims' leases run out and a server sends them later.
      if (this.stopped) return;
      let capped = false;
      for (const delivery of due) capped = this.begin(delivery, claimedMs + LEASE_MS) >= PER_WEBHOOK || capped;
      // Only a webhook that reached its share can have left due deliveries unclaimed
      // with slots free: claim again without it.
      if (!capped || due.length === free) return;
    }
  }

  /** Starts an attempt in a slot; answers how many its webhook has in flight now. */
  private begin(delivery: DueDelivery, leaseEndsMs: number): number {
    const held = (this.inFlight.get(delivery.webhookId) ?? 0) + 1;
    this.inFlight.set(delivery.webhookId, held);
    const attempt: Promise<void> = this.attempt(delivery, leaseEndsMs)
      .then(
        () => {},
        (error) => this.warn(error),
      )
      .finally(() => {
        this.attempts.delete(attempt);
        const left = this.inFlight.get(delivery.webhookId)! - 1;
        if (left > 0) this.inFlight.set(delivery.webhookId, left);
        else this.inFlight.delete(delivery.webhookId);
        this.refill();
      });
    this.attempts.add(attempt);
    return held;
  }

  /** A claim or a record that failed: the next one tries again. */
  private warn(error: unknown): void {
    // A state file locked for a moment by a writer: simply the next claim.
    if ((error as { code?: unknown })?.code === "SQLITE_BUSY" || this.stopped) return;
    // A state file removed or replaced under the server: the server has said so (serving-thread.ts), for good.
    if (error instanceof StateFileChangedError) return;
    // A database that is away fails every claim: one line a minute says so.
    if (performance.now() - this.lastWarning < 60_000) return;
    this.lastWarning = performance.now();
    this.options.logger?.log("warn", "webhook deliveries could not be read or recorded in the state store; trying again every second", { error: String((error as Error)?.message ?? error) });
  }

  /**
   * Stops the timer, cuts short the attempts waiting for an answer, and waits for the
   * rest (an answer being recorded) at most `graceMs`: a server stops promptly even
   * while a receiver is slow. An attempt cut short is not recorded; its lease runs out
   * and a server sends it again (at least once). A claim under way is not waited for:
   * what it claims is not sent once stopped, whether it answers now or never (a
   * database gone silent).
   */
  async stop(graceMs = 300): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.stopping.abort();
    if (this.attempts.size === 0) return;
    // A timer cleared as soon as the attempts end: one left running would keep the
    // process alive after the stop.
    await untilLater(Promise.allSettled(this.attempts), graceMs);
  }
}

const timedOut = Symbol("timed out");

/** The work's outcome, or `timedOut` if it has not settled within `ms`. */
async function untilLater<T>(work: Promise<T>, ms: number): Promise<T | typeof timedOut> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<typeof timedOut>((resolve) => {
    timer = setTimeout(() => resolve(timedOut), Math.max(0, ms));
    timer.unref?.();
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
    // A try given up may still fail later: nobody waits for it.
    work.catch(() => {});
  }
}

/** Sleeps `ms`, or less if `signal` aborts meanwhile. */
function pauseUnlessStopped(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done);
  });
}

/**
 * A failure to record that a later try may not meet: SQLite's write lock taken, or a
 * PostgreSQL database that cannot be reached or cannot serve now (a broken connection).
 */
function recordable(error: unknown): boolean {
  return error instanceof StoreUnavailableError || isUnavailable(error) || (error as { code?: unknown })?.code === "SQLITE_BUSY";
}
