/**
 * The key, plan and usage store. The HTTP layer and the CLI see only this interface;
 * SQLite implements it today, and a shared database (PostgreSQL) can implement it for
 * deployments of several instances. Every method is async for that reason.
 */

import type { Correction, CorrectionFields, CorrectionSnapshot } from "../corrections/correction.ts";

/** A plan. `null` means unlimited. */
export interface Plan {
  readonly name: string;
  readonly maxBatchSize: number;
  readonly monthlyUnits: number | null;
  /** Requests per second; the burst is one second's worth. */
  readonly rateLimit: number | null;
}

/** What `plans set` changes; a field left undefined keeps its value. */
export interface PlanChanges {
  readonly maxBatchSize?: number;
  readonly monthlyUnits?: number | null;
  readonly rateLimit?: number | null;
}

/** An API key as the store keeps it: never the secret, only its hash. */
export interface ApiKey {
  /** Public identifier, `key_…`: safe to log and show. */
  readonly id: string;
  readonly name: string;
  readonly plan: string;
  /** ISO 8601 UTC. */
  readonly createdAt: string;
  /** ISO 8601 UTC, or null while the key is active. */
  readonly revokedAt: string | null;
  /** Its controls (CONTRACT §16); present only on a key that has at least one. */
  readonly controls?: KeyControls;
  /**
   * ISO 8601 UTC until which the secret it had before its last rotation still works
   * (`keys rotate --grace`); present only when that rotation gave a grace period.
   */
  readonly graceUntil?: string;
}

/** A key together with its secret, which exists only at creation or rotation. */
export interface IssuedKey {
  readonly key: ApiKey;
  readonly secret: string;
}

/** An active key with its plan, as the request path needs it. */
export interface ActiveKey {
  readonly key: ApiKey;
  readonly plan: Plan;
  /**
   * Milliseconds since the epoch: set when this is the key's previous secret, which a
   * rotation with a grace period keeps working until then (and refused from then on).
   */
  readonly secretValidUntil?: number;
}

/**
 * Where a store's change counter stands: what a server's caches compare to know whether
 * to reload (see sameGeneration).
 */
export interface Generation {
  /**
   * The store's id, made at random with its schema: a database dropped and made again,
   * or a state restored from another one, counts again from the same values, and is told
   * apart by it.
   */
  readonly storeId: string;
  /** Moves whenever a key, a plan or a correction changes, from any process or host. */
  readonly count: number;
}

/** Whether two readings are of the same store at the same change. */
export function sameGeneration(a: Generation, b: Generation): boolean {
  return a.count === b.count && a.storeId === b.storeId;
}

/** A snapshot of every active key by the hash of its secret, for the in-memory key cache. */
export interface AuthSnapshot {
  /** The change counter the keys were read with. */
  readonly generation: Generation;
  readonly keysByHash: ReadonlyMap<string, ActiveKey>;
}

/** A key with everything a store keeps of it, the hash of its secret included: what `state copy` moves. */
export interface KeyRecord extends ApiKey {
  /** Lower-case hex SHA-256 of the secret (see secret.ts). */
  readonly secretHash: string;
  /** ISO 8601 UTC of the last rotation, or null. */
  readonly rotatedAt: string | null;
  /** The hash of the secret a rotation with grace keeps working until graceUntil; left out: none. */
  readonly previousSecretHash?: string | null;
}

/** Units a key used in one period. */
export interface UsageRecord {
  readonly keyId: string;
  /** `YYYY-MM`. */
  readonly period: string;
  readonly used: number;
}

/**
 * Everything a store holds, read in one consistent snapshot, for copying it to another
 * store (`iplookup state copy`). A table added to the stores adds its rows here.
 */
export interface StateSnapshot {
  /** By name. */
  readonly plans: readonly Plan[];
  /** Oldest first, revoked ones included, as listKeys lists them. */
  readonly keys: readonly KeyRecord[];
  /** Rows with units used (a row of 0 says nothing, and is left out). */
  readonly usage: readonly UsageRecord[];
  /** Use per key and UTC day; exportState always fills it (left out: none to import). */
  readonly days?: readonly DayUsageRecord[];
  /** Admin tokens (their hashes), oldest first; exportState always fills it (left out: none). */
  readonly adminTokens?: readonly AdminTokenRecord[];
  /** Local corrections, in address order; exportState always fills it (left out: none). */
  readonly corrections?: readonly Correction[];
  /** The audit log, oldest first; exportState always fills it (left out: none). */
  readonly audit?: readonly AuditEntry[];
  /**
   * Webhooks with their signing secrets, oldest first; exportState always fills it (left
   * out: none). Their outbox (events not yet delivered, the delivery log) stays behind,
   * but for onceEvents.
   */
  readonly webhooks?: readonly WebhookRecord[];
  /**
   * The events that happen once (those with a once key: usage.threshold, key.expiring),
   * oldest first, without their deliveries: a copy knows them as told, and does not tell
   * them again. exportState always fills it (left out: none).
   */
  readonly onceEvents?: readonly OnceEventRecord[];
}

/** How importState treats a store that holds keys already, and how the import is audited. */
export interface ImportOptions {
  /**
   * False (the default): such a store is refused with StoreError, changing nothing.
   * True: its keys, usage and plans are deleted first, in the same transaction, so that
   * it holds exactly the snapshot.
   */
  readonly replace?: boolean;
  /**
   * The import's own audit entry (see Audit), given the snapshot written: written in the
   * import's transaction after the snapshot's audit log, which a replace puts in place of
   * the store's, so that the entry is kept either way.
   */
  readonly audit?: Audit<StateSnapshot>;
}

/** One request's units to charge against a key's monthly quota. */
export interface Charge {
  readonly keyId: string;
  /** The period, `YYYY-MM` (UTC calendar month). */
  readonly period: string;
  readonly units: number;
  /** The plan's monthly units, or null for no limit. */
  readonly limit: number | null;
  /**
   * When the request was answered, in milliseconds since the epoch (the wall clock that
   * chose `period`): a granted charge of at least one unit counts as one request and its
   * units on this UTC day, in the same commit as the units, and the latest such time is
   * the key's last use. Left out: the store's clock when the charge is committed.
   */
  readonly at?: number;
  /**
   * Aborted when the client has gone (the request's signal): a charge whose signal is
   * aborted when its transaction applies it is not made, and its outcome says `gone`.
   * Nothing is charged for an answer nobody receives (CONTRACT §13).
   */
  readonly signal?: AbortSignal;
}

/** An admin token as the store keeps it: never the secret, only its hash. */
export interface AdminToken {
  /** Public identifier, `adm_…`. */
  readonly id: string;
  readonly name: string;
  /** ISO 8601 UTC. */
  readonly createdAt: string;
  /** ISO 8601 UTC, or null while the token is active. */
  readonly revokedAt: string | null;
  /** Present (true) only on a read-only token, which may only read (GET, HEAD). */
  readonly readOnly?: true;
}

/** An admin token together with its secret (`ipla_…`), which exists only at creation. */
export interface IssuedAdminToken {
  readonly token: AdminToken;
  readonly secret: string;
}

/** A day's use: requests answered and units charged on lookups (of one key, or of all). */
export interface DayUsage {
  /** `YYYY-MM-DD`, the UTC day. */
  readonly day: string;
  readonly requests: number;
  readonly units: number;
}

/** One key's use over a span of days. */
export interface KeyUsage {
  readonly keyId: string;
  readonly name: string;
  readonly requests: number;
  readonly units: number;
}

/** What a key has used: units in one period, and its last answered lookup. */
export interface KeyActivity {
  readonly keyId: string;
  /** Units charged in the period asked about (0 when none). */
  readonly units: number;
  /** ISO 8601 UTC of the last charged request, in any period; null when never used. */
  readonly lastUsedAt: string | null;
}

/** A key's use on one UTC day, as `state copy` moves it. */
export interface DayUsageRecord extends DayUsage {
  readonly keyId: string;
  /** ISO 8601 UTC of the day's last charged request. */
  readonly lastUsedAt: string;
}

/** An admin token with the hash of its secret, as `state copy` moves it. */
export interface AdminTokenRecord extends AdminToken {
  /** Lower-case hex SHA-256 of the secret (see secret.ts). */
  readonly secretHash: string;
}

/** The outcome of a charge: `ok` false means it did not fit and nothing was charged. */
export interface ChargeOutcome {
  readonly ok: boolean;
  /** Units used in the period after this charge (or, when refused, without it). */
  readonly used: number;
  /** The client had gone before the charge was applied (see Charge.signal): nothing was charged. */
  readonly gone?: boolean;
  /**
   * The key is no longer in the store (deleted behind the servers' backs: `state copy
   * --replace`, psql, sqlite3, while a key cache still held it): nothing was charged.
   * The group's other charges are decided as if it had not been in it.
   */
  readonly keyGone?: boolean;
}

/** What a lease of rate-limit tokens got (see Store.leaseTokens). */
export interface TokenLease {
  /** Tokens taken for the caller: from 0 to what it wanted. */
  readonly granted: number;
  /** Tokens left in the shared bucket afterwards (a fraction of one when it ran dry). */
  readonly available: number;
}

/**
 * A key's controls (CONTRACT §16), as the store keeps them, already checked and written
 * canonically (see src/access/key-control-values.ts). Null: no such control.
 */
export interface KeyControls {
  /** ISO 8601 UTC: from then on the key is refused with key_expired. */
  readonly expiresAt: string | null;
  /** Canonical CIDR blocks the client's address must lie in. */
  readonly allowedCidrs: readonly string[] | null;
  /** Browser origins (`https://app.example.com`) a request's Origin header must be one of. */
  readonly allowedOrigins: readonly string[] | null;
  /** The operator's own JSON object (at most 1 KiB), returned by the admin API. */
  readonly metadata: Readonly<Record<string, unknown>> | null;
}

/** What `updateKey` changes; a field left undefined keeps its value, null clears it. */
export interface KeyChanges {
  readonly plan?: string;
  readonly expiresAt?: string | null;
  readonly allowedCidrs?: readonly string[] | null;
  readonly allowedOrigins?: readonly string[] | null;
  readonly metadata?: Readonly<Record<string, unknown>> | null;
}

/** How a key is rotated. */
export interface RotateOptions {
  /** How long the old secret keeps working, in milliseconds; 0 or left out: it stops at once. */
  readonly graceMs?: number;
}

/** One entry of the audit log: a change made through the admin API, the console or the CLI. */
export interface AuditEntry {
  /** ISO 8601 UTC. */
  readonly at: string;
  /** The admin token's id, or `cli`. */
  readonly actor: string;
  /** `key.created`, `key.updated`, `plan.updated`, `admin_token.revoked`, … */
  readonly action: string;
  /** What was changed: a key's or token's id, `plan:NAME`, … */
  readonly target: string;
  /** What changed, field by field (never a secret nor a secret's hash). */
  readonly changes: Readonly<Record<string, unknown>>;
}

/**
 * Where an entry stands in the audit log's order, newest first: its time, then the order
 * in which entries were written (`seq`, unique in the log), for entries of the same
 * millisecond. A position names a place in that order, not an entry: it stays valid
 * whatever is written or removed around it.
 */
export interface AuditPosition {
  readonly at: string;
  readonly seq: number;
}

/** One page of the audit log (see Store.pageAudit). */
export interface AuditPage {
  readonly entries: AuditEntry[];
  /** The position of the page's last entry when older entries follow in the span; null when none do. */
  readonly next: AuditPosition | null;
}

/**
 * What a change writes with itself, in its own transaction: its audit log entry (made by
 * AuditLog.entry, which keeps no secret) and the events that announce it (CONTRACT §16),
 * each recorded as WebhookStore.addEvent records one. The change, its entry and its
 * events are committed together or not at all: a change that fails, for whatever
 * reason, leaves neither an entry nor an event, and a change with no entry is never
 * committed.
 */
export interface ChangeRecord {
  readonly entry: AuditEntry;
  readonly events?: readonly NewEvent[];
}

/**
 * How a store's change is audited: called inside the change's transaction once the change
 * is made, with what the change answers (`after`) and what it replaced (`before`), both
 * as that transaction saw them. Null records nothing (a change that changed nothing). It
 * must not wait for anything: what it throws, and a record the store cannot write, undo
 * the change. A change tried again (a lock met at its start) calls it again.
 */
export type Audit<After, Before = null> = (after: After, before: Before) => ChangeRecord | null;

// ---- Webhooks and the event outbox (CONTRACT §16; the events themselves: src/events/) ----

/** A webhook an operator registered: never its secret, which is shown once. */
export interface Webhook {
  /** Public identifier, `wh_…`. */
  readonly id: string;
  readonly url: string;
  /** The event types it receives. */
  readonly events: readonly string[];
  /** ISO 8601 UTC. */
  readonly createdAt: string;
}

/** A webhook with its signing secret, as `state copy` moves it. */
export interface WebhookRecord extends Webhook {
  readonly secret: string;
}

/** An event recorded with a once key, as `state copy` moves it (see StateSnapshot.onceEvents). */
export interface OnceEventRecord {
  readonly id: string;
  readonly type: string;
  readonly body: string;
  /** ISO 8601 UTC. */
  readonly createdAt: string;
  readonly onceKey: string;
}

/** A webhook with its signing secret (`whsec_…`), as it is created. */
export interface IssuedWebhook {
  readonly webhook: Webhook;
  readonly secret: string;
}

/** An event to put in the outbox. */
export interface NewEvent {
  /** `msg_…`, sent as webhook-id. */
  readonly id: string;
  readonly type: string;
  /** The exact JSON body every delivery of it sends (and signs). */
  readonly body: string;
  /** ISO 8601 UTC: when it happened; its deliveries are retried until 24 hours after. */
  readonly createdAt: string;
  /**
   * When set, the event is recorded only if no event with this key was (the unique
   * constraint decides, across every process and host): `usage.threshold`, `key.expiring`.
   */
  readonly onceKey?: string;
  /** Deliver to this webhook only, whatever it subscribes to (the test event). */
  readonly webhookId?: string;
}

export type DeliveryState = "pending" | "delivered" | "failed";

/** A delivery the deliverer has claimed (leased) and is to attempt now. */
export interface DueDelivery {
  readonly deliveryId: number;
  /** The number of this attempt: 1 for the first. */
  readonly attempt: number;
  readonly webhookId: string;
  readonly url: string;
  readonly secret: string;
  readonly eventId: string;
  readonly eventType: string;
  readonly body: string;
  /** ISO 8601 UTC. */
  readonly eventCreatedAt: string;
}

/** One attempt, as the delivery log shows it. */
export interface DeliveryAttempt {
  readonly attempt: number;
  /** ISO 8601 UTC, when it started. */
  readonly at: string;
  /** The receiver's HTTP status; null when there was no answer. */
  readonly status: number | null;
  readonly durationMs: number;
  /** The first 256 bytes of the answer's body (as text), or null. */
  readonly response: string | null;
  /** Why there was no answer (timeout, refused, …), or null. */
  readonly error: string | null;
}

/** What an attempt came to, for recordAttempt. */
export interface AttemptResult extends DeliveryAttempt {
  /**
   * The delivery, as claimed (DueDelivery). Its id alone does not name it for good: a
   * state replaced while the attempt was under way (`state copy --replace` empties the
   * outbox, and SQLite then gives the same ids again; a PostgreSQL restore sets the ids
   * back) may hold another delivery by that id. Its event and webhook do.
   */
  readonly deliveryId: number;
  readonly eventId: string;
  readonly webhookId: string;
  readonly state: DeliveryState;
  /** When to try again (ms since the epoch), for state `pending`. */
  readonly nextAttemptAt: number | null;
}

/** A delivery with its log, newest attempt last. */
export interface DeliveryRecord {
  readonly id: number;
  readonly eventId: string;
  readonly eventType: string;
  /** When the event happened (ISO 8601 UTC). */
  readonly createdAt: string;
  readonly state: DeliveryState;
  readonly attempts: readonly DeliveryAttempt[];
  /** ISO 8601 UTC of the next try while pending; null otherwise. */
  readonly nextAttemptAt: string | null;
}

/** What claimDeliveries takes. */
export interface ClaimOptions {
  /** The most deliveries to claim. */
  readonly limit: number;
  /** Now, in ms since the epoch (the wall clock: the schedule is shared by a fleet). */
  readonly nowMs: number;
  /** How long the claim holds: another server takes the delivery only after it. */
  readonly leaseMs: number;
  /** Only this event's deliveries (a test event sent at once). */
  readonly eventId?: string;
  /**
   * At most `limit` deliveries of one webhook in flight, counting the `inFlight` the
   * caller has of each already (by webhook id): a webhook at its limit gets none, and
   * the claim goes on to the others' deliveries behind its own.
   */
  readonly perWebhook?: { readonly limit: number; readonly inFlight: Readonly<Record<string, number>> };
}

/**
 * The webhook part of a Store (`store.webhooks`). The outbox is durable: an event is committed with what
 * caused it (a threshold with the charge that crossed it), its deliveries wait in the
 * store until they succeed or are given up, and a restart loses none. A delivery is
 * claimed with a lease (and, on PostgreSQL, FOR UPDATE SKIP LOCKED), so however many
 * servers share the store, one of them sends it at a time.
 */
export interface WebhookStore {
  /**
   * Creates a webhook with a new secret; the URL and event types are checked by the
   * caller. A URL another webhook has already (the same receiver, see receiverOf) is refused with
   * DuplicateWebhookError (webhook-ids.ts), in the same transaction as the insert.
   */
  createWebhook(url: string, events: readonly string[], audit?: Audit<IssuedWebhook>): Promise<IssuedWebhook>;
  /** Every webhook, oldest first. */
  listWebhooks(): Promise<Webhook[]>;
  getWebhook(id: string): Promise<Webhook | null>;
  /**
   * Removes a webhook with its deliveries and their log; false when there is no such
   * webhook. `audit` is given the webhook removed.
   */
  removeWebhook(id: string, audit?: Audit<Webhook>): Promise<boolean>;
  /**
   * Records an event and, in the same transaction, one pending delivery, due now, for
   * every webhook subscribed to its type (or for `webhookId` alone). False, changing
   * nothing, when its onceKey is recorded already.
   */
  addEvent(event: NewEvent): Promise<boolean>;
  /** Claims due deliveries (pending, next try passed, no live lease), oldest due first. */
  claimDeliveries(options: ClaimOptions): Promise<DueDelivery[]>;
  /**
   * Logs an attempt and moves its delivery on (delivered, failed, or pending until
   * nextAttemptAt), releasing the lease. False, changing nothing, when the attempt was
   * recorded already (a lease that ran out and a second sender), or when the delivery is
   * no longer there (its id now another event's or webhook's: see AttemptResult).
   */
  recordAttempt(result: AttemptResult): Promise<boolean>;
  /** A webhook's latest deliveries, newest event first, with their attempts. */
  listDeliveries(webhookId: string, limit: number): Promise<DeliveryRecord[]>;
  /**
   * Forgets what is done with from before `before` (ISO 8601): delivered and failed
   * deliveries of older events with their attempts, and older events left without a
   * delivery. Pending ones stay. Answers the events removed.
   */
  pruneOutbox(before: string): Promise<number>;
}

/**
 * Every change an operator makes (keys, plans, admin tokens, corrections, webhooks) takes
 * an optional `audit` (see Audit): its audit entry, and the events that announce it, are
 * then written in the change's own transaction.
 */
export interface Store {
  /** Webhooks and the event outbox (CONTRACT §16). */
  readonly webhooks: WebhookStore;
  /** Creates a key, with its controls (CONTRACT §16) when given, in one step. */
  createKey(name: string, plan: string, controls?: KeyControls, audit?: Audit<IssuedKey>): Promise<IssuedKey>;
  listKeys(): Promise<ApiKey[]>;
  getKey(id: string): Promise<ApiKey | null>;
  /**
   * Revokes a key; null when there is no such key. Revoking twice is harmless (and changes
   * nothing: `audit` then sees a `before` revoked already).
   */
  revokeKey(id: string, audit?: Audit<ApiKey, ApiKey>): Promise<ApiKey | null>;
  /**
   * Gives an active key a new secret; the old secret stops working, at once or, with
   * `graceMs`, at the end of that grace (a secret kept by an earlier grace stops at once).
   * Null when no such active key.
   */
  rotateKey(id: string, options?: RotateOptions, audit?: Audit<IssuedKey, ApiKey>): Promise<IssuedKey | null>;
  /**
   * Moves an active key to another plan, as one atomic step; its secret, name and usage
   * stay. Resolves to the key as it is afterwards, or null when there is no such key.
   * Throws StoreError, changing nothing, for a plan that does not exist and for a revoked
   * key (revocation is final: a revoked key keeps the plan it had). Moving a key to the
   * plan it is on already changes nothing and resolves to the key. A change moves the
   * change counter (generation), so running servers see it within a second.
   */
  setKeyPlan(id: string, plan: string, audit?: Audit<ApiKey, ApiKey>): Promise<ApiKey | null>;

  listPlans(): Promise<Plan[]>;
  getPlan(name: string): Promise<Plan | null>;
  /**
   * Creates or changes a plan. A new plan needs every field; throws StoreError otherwise.
   * `audit`'s `before` is null for a new plan.
   */
  setPlan(name: string, changes: PlanChanges, audit?: Audit<Plan, Plan | null>): Promise<Plan>;

  /** The cheap change counter behind AuthSnapshot.generation, with the store's id: one read. */
  generation(): Promise<Generation>;
  authSnapshot(): Promise<AuthSnapshot>;
  /**
   * The active key whose secret has this hash, with its plan, or null: read from the
   * store itself, for a secret the key cache does not know yet (a key created a moment
   * ago by another process).
   */
  findActiveKey(secretHash: string): Promise<ActiveKey | null>;

  /**
   * Checks a charge against its quota and records it, as one atomic step: concurrent
   * charges never spend more than the limit. Resolves only once the units are durable
   * (committed), so a response sent after it never loses its units to a crash. A charge
   * for a key the store no longer holds resolves with `keyGone`, charging nothing.
   */
  charge(charge: Charge): Promise<ChargeOutcome>;
  unitsUsed(keyId: string, period: string): Promise<number>;

  /**
   * Use per UTC day from `from` to `to` (`YYYY-MM-DD`, inclusive), of one key or of all:
   * only days with use, oldest first.
   */
  usageByDay(from: string, to: string, keyId?: string): Promise<DayUsage[]>;
  /** The keys with use from `from` to `to` (inclusive), most units first (then by id). */
  usageByKey(from: string, to: string): Promise<KeyUsage[]>;
  /** Every key that has been used: its units in `period` (`YYYY-MM`) and its last use. */
  keyActivity(period: string): Promise<KeyActivity[]>;

  /**
   * Creates an admin token, for the admin API (never accepted as an API key, nor an API
   * key as an admin token: they live apart). Throws StoreError for a bad name.
   */
  createAdminToken(name: string, audit?: Audit<IssuedAdminToken>): Promise<IssuedAdminToken>;
  /** Every admin token, revoked ones included, oldest first. */
  listAdminTokens(): Promise<AdminToken[]>;
  getAdminToken(id: string): Promise<AdminToken | null>;
  /** Revokes an admin token; null when there is no such token. Revoking twice is harmless (see revokeKey). */
  revokeAdminToken(id: string, audit?: Audit<AdminToken, AdminToken>): Promise<AdminToken | null>;
  /** The active admin token whose secret has this hash, or null. */
  findAdminToken(secretHash: string): Promise<AdminToken | null>;

  // Local corrections (CONTRACT §15), keyed by their block's canonical CIDR text (see
  // parseCorrectionBlock). Every change moves the change counter (generation), so
  // running servers reload them within a second. A correction that is not sound
  // (checkCorrectionRow) is refused with StoreError, changing nothing.
  /** Every correction, IPv4 first, in address order, a block before the blocks inside it. */
  listCorrections(): Promise<Correction[]>;
  /** The corrections with the change counter, from one snapshot: what a server's correction cache loads. */
  correctionSnapshot(): Promise<CorrectionSnapshot>;
  /**
   * Sets a block's correction, replacing the one it had (whose created_at stays); updated_at
   * is now. `audit`'s `before` is the correction replaced, or null. The same fields and note
   * as the block holds write nothing (updated_at and the change counter stay): `audit` is
   * given that correction as both.
   */
  putCorrection(cidr: string, fields: CorrectionFields, note: string | null, audit?: Audit<Correction, Correction | null>): Promise<Correction>;
  /** Removes a block's correction and resolves to it; null when the block has none. `audit` is given the one removed. */
  removeCorrection(cidr: string, audit?: Audit<Correction>): Promise<Correction | null>;

  /** Every plan, key (with its secret's hash) and usage row, from one consistent snapshot. */
  exportState(): Promise<StateSnapshot>;
  /**
   * Writes a snapshot into this store, in one transaction: plans are created or changed
   * to the snapshot's values (other plans stay, unless `replace`), keys and usage rows
   * are added as they are. Throws StoreError, changing nothing, for a snapshot that is
   * not sound (see checkSnapshot) and for a store that holds keys or corrections already, unless
   * `options.replace`. Moves the change counter, so running servers reload their keys.
   */
  importState(snapshot: StateSnapshot, options?: ImportOptions): Promise<void>;

  /**
   * For stores that several servers share (PostgreSQL): takes up to `wanted` tokens from
   * the key's one rate-limit bucket, which holds one second's worth (`ratePerSecond`, the
   * burst) and refills continuously at that rate on the store's clock, as one atomic step
   * whichever server asks. The caller spends them locally and must drop what it has not
   * spent shortly after (see LeaseLimiter), which is what bounds a key's rate across
   * servers. Rejects with StoreUnavailableError when the store cannot be reached. Left
   * out by stores of one host (SQLite), whose servers share buckets in memory.
   */
  leaseTokens?(keyId: string, ratePerSecond: number, wanted: number): Promise<TokenLease>;
  /**
   * Whether the store takes writes now: resolves once a statement that needs a writable
   * database (and changes nothing) has run, rejects as a charge would (StoreUnavailableError
   * for a store that is away or takes no writes). A server whose store is unhealthy tries
   * it to know when charges can succeed again (StoreHealth). Left out by a store whose
   * write faults are told otherwise (SQLite: see sqlite-faults.ts).
   */
  probeWrite?(): Promise<void>;

  // Key controls, read-only admin tokens and the audit log (CONTRACT §16).

  /**
   * Changes an active key's plan and controls, as one atomic step; its secret, name and
   * usage stay. Resolves to the key as it is afterwards, or null when there is no such
   * key. Throws StoreError, changing nothing, for a plan that does not exist and for a
   * revoked key. A change moves the change counter, so running servers see it within a
   * second; one that changes nothing writes nothing (`audit` sees `before` equal to `after`).
   */
  updateKey(id: string, changes: KeyChanges, audit?: Audit<ApiKey, ApiKey>): Promise<ApiKey | null>;
  /** Creates a read-only admin token, which may only read (see createAdminToken). */
  createReadOnlyAdminToken(name: string, audit?: Audit<IssuedAdminToken>): Promise<IssuedAdminToken>;
  /**
   * Audit entries from `from` to `to` (ISO 8601 UTC; from included, to excluded), newest
   * first, at most `limit`.
   */
  listAudit(from: string, to: string, limit: number): Promise<AuditEntry[]>;
  /**
   * One page of the audit log: the entries of listAudit that come after `before` in its
   * order (older than it), at most `limit`, and the position of the last one when the span
   * holds more (null: these are its oldest). Entries written meanwhile do not move a page:
   * they are newer than any position already handed out.
   */
  pageAudit(from: string, to: string, limit: number, before: AuditPosition | null): Promise<AuditPage>;

  close(): Promise<void>;
}

/** A store refusal a caller can show as it is (unknown plan, missing plan fields, …). */
export class StoreError extends Error {
  override readonly name = "StoreError";
}

/**
 * The state named does not exist, and the caller asked not to create it: commands that
 * only read or change what is there refuse a mistyped --state instead of starting an
 * empty store (CONTRACT §12).
 */
export class StateNotFoundError extends StoreError {}

/**
 * The state is of an older schema than this iplookup's, and the caller only reads it,
 * which does not migrate it (a PostgreSQL database, which a whole fleet shares). Not a
 * StoreError (a bad value, exit 2): what was asked is fine, but cannot be done on it
 * yet, and a command exits 1.
 */
export class OlderSchemaError extends Error {
  override readonly name = "OlderSchemaError";
}

/**
 * The store cannot be reached or did not answer in time (PostgreSQL down, unreachable,
 * or too slow): worth trying again later, unlike StoreError. The message names the
 * database without its password. A charge refused this way was not made, except one
 * that timed out after its transaction was sent, which may still commit (counted, and
 * never reported as made).
 */
export class StoreUnavailableError extends Error {
  override readonly name: string = "StoreUnavailableError";
}

/**
 * A StoreUnavailableError for a statement that ran out of its time (a lock another
 * session holds, a slow statement) rather than one the store refused: it says nothing
 * about whether the store is there, so it does not make a server unready (StoreHealth);
 * the key poll's reads decide that.
 */
export class StoreTimeoutError extends StoreUnavailableError {
  override readonly name: string = "StoreTimeoutError";
}

/**
 * A StoreUnavailableError for a statement the store refused through no fault of the
 * request while it otherwise serves (a privilege revoked on one table, its schema
 * changed under it): the requests that need it answer 503, but the store is there, so it
 * does not make a server unready (StoreHealth); the refusal is logged on its own.
 */
export class StoreRefusedError extends StoreUnavailableError {
  override readonly name: string = "StoreRefusedError";
}
