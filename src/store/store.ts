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
}

/** The outcome of a charge: `ok` false means it did not fit and nothing was charged. */
export interface ChargeOutcome {
  readonly ok: boolean;
  /** Units used in the period after this charge (or, when refused, without it). */
  readonly used: number;
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
  charge(charge: Charge): Promise<ChargeOutcome>;
  unitsUsed(keyId: string, period: string): Promise<number>;

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
