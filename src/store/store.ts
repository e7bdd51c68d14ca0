/**
 * The key, plan and usage store. The HTTP layer and the CLI see only this interface;
 * SQLite implements it today, and a shared database (PostgreSQL) can implement it for
 * deployments of several instances. Every method is async for that reason.
 */

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
}

/** A snapshot of every active key by the hash of its secret, for the in-memory key cache. */
export interface AuthSnapshot {
  /** Changes whenever a key or a plan changes, from any process. */
  readonly generation: number;
  readonly keysByHash: ReadonlyMap<string, ActiveKey>;
}

/** A key with everything a store keeps of it, the hash of its secret included: what `state copy` moves. */
export interface KeyRecord extends ApiKey {
  /** Lower-case hex SHA-256 of the secret (see secret.ts). */
  readonly secretHash: string;
  /** ISO 8601 UTC of the last rotation, or null. */
  readonly rotatedAt: string | null;
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
}

/** How importState treats a store that holds keys already. */
export interface ImportOptions {
  /**
   * False (the default): such a store is refused with StoreError, changing nothing.
   * True: its keys, usage and plans are deleted first, in the same transaction, so that
   * it holds exactly the snapshot.
   */
  readonly replace?: boolean;
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
}

/** How a charge is committed. */
export interface ChargeOptions {
  /**
   * Commit at once, with whatever else is queued, instead of with the rest of this turn
   * of the event loop; a store that can commit synchronously (SQLite) settles the charge
   * before the caller's current turn ends. A store that cannot (PostgreSQL) ignores it.
   */
  readonly commitNow?: boolean;
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
}

/** What a lease of rate-limit tokens got (see Store.leaseTokens). */
export interface TokenLease {
  /** Tokens taken for the caller: from 0 to what it wanted. */
  readonly granted: number;
  /** Tokens left in the shared bucket afterwards (a fraction of one when it ran dry). */
  readonly available: number;
}

export interface Store {
  createKey(name: string, plan: string): Promise<IssuedKey>;
  listKeys(): Promise<ApiKey[]>;
  getKey(id: string): Promise<ApiKey | null>;
  /** Revokes a key; null when there is no such key. Revoking twice is harmless. */
  revokeKey(id: string): Promise<ApiKey | null>;
  /** Gives an active key a new secret; the old secret stops working. Null when no such active key. */
  rotateKey(id: string): Promise<IssuedKey | null>;
  /**
   * Moves an active key to another plan, as one atomic step; its secret, name and usage
   * stay. Resolves to the key as it is afterwards, or null when there is no such key.
   * Throws StoreError, changing nothing, for a plan that does not exist and for a revoked
   * key (revocation is final: a revoked key keeps the plan it had). Moving a key to the
   * plan it is on already changes nothing and resolves to the key. A change moves the
   * change counter (generation), so running servers see it within a second.
   */
  setKeyPlan(id: string, plan: string): Promise<ApiKey | null>;

  listPlans(): Promise<Plan[]>;
  getPlan(name: string): Promise<Plan | null>;
  /** Creates or changes a plan. A new plan needs every field; throws StoreError otherwise. */
  setPlan(name: string, changes: PlanChanges): Promise<Plan>;

  /** The cheap change counter behind AuthSnapshot.generation. */
  generation(): Promise<number>;
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
   * (committed), so a response sent after it never loses its units to a crash.
   */
  charge(charge: Charge, options?: ChargeOptions): Promise<ChargeOutcome>;
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
  createAdminToken(name: string): Promise<IssuedAdminToken>;
  /** Every admin token, revoked ones included, oldest first. */
  listAdminTokens(): Promise<AdminToken[]>;
  getAdminToken(id: string): Promise<AdminToken | null>;
  /** Revokes an admin token; null when there is no such token. Revoking twice is harmless. */
  revokeAdminToken(id: string): Promise<AdminToken | null>;
  /** The active admin token whose secret has this hash, or null. */
  findAdminToken(secretHash: string): Promise<AdminToken | null>;

  /** Every plan, key (with its secret's hash) and usage row, from one consistent snapshot. */
  exportState(): Promise<StateSnapshot>;
  /**
   * Writes a snapshot into this store, in one transaction: plans are created or changed
   * to the snapshot's values (other plans stay, unless `replace`), keys and usage rows
   * are added as they are. Throws StoreError, changing nothing, for a snapshot that is
   * not sound (see checkSnapshot) and for a store that holds keys already, unless
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
 * The store cannot be reached or did not answer in time (PostgreSQL down, unreachable,
 * or too slow): worth trying again later, unlike StoreError. The message names the
 * database without its password. A charge refused this way was not made, except one
 * that timed out after its transaction was sent, which may still commit (counted, and
 * never reported as made).
 */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
}
