import { SQL } from "bun";
import { AsyncGroupCommit, ItemFailure } from "./async-group-commit.ts";
import { readPastBrokenConnections } from "./broken-connections.ts";
import { isReadOnly, isRefusal, isUnavailable, sqlstateOf } from "./postgres-unavailable.ts";
import { chargeQuickRows, planQuickCharges, rowId } from "./postgres-quick-charges.ts";
import { chargeError, keyNameError } from "./charge-rules.ts";
import { applyPlanChanges, samePlan } from "./plan-rules.ts";
import { checkPostgresSchema, migratePostgres } from "./postgres-schema.ts";
import { redactUrl } from "./redact-url.ts";
import { hashSecret, newKeyId, newSecret } from "./secret.ts";
import { newAdminSecret, newAdminTokenId } from "./admin-token.ts";
import { DayTally } from "./usage-days.ts";
import { checkSnapshot } from "./state-snapshot.ts";
import * as corrections from "./postgres-corrections.ts";
import type { Correction, CorrectionFields, CorrectionSnapshot } from "../corrections/correction.ts";
import { applyControlChanges, controlColumnList, controlFields, controlValues, sameControlValues, type ControlColumns } from "./key-control-columns.ts";
import { exportOnceEvents, exportWebhookRows, importWebhookRows, PostgresWebhooks, recordCrossings } from "./postgres-webhooks.ts";
import { writeChangeRecord } from "./postgres-records.ts";
import { toGeneration, type GenerationRow } from "./generation-row.ts";
import type { UsageCrossing } from "./sqlite-webhooks.ts";
import { crossesThreshold } from "../events/usage-thresholds.ts";
import { scrubEntry } from "../audit/audit-log.ts";
import {
  OlderSchemaError,
  StoreError,
  StoreTimeoutError,
  StoreRefusedError,
  StoreUnavailableError,
  type ActiveKey,
  type AdminToken,
  type AdminTokenRecord,
  type ApiKey,
  type Audit,
  type AuditEntry,
  type AuditPage,
  type AuditPosition,
  type AuthSnapshot,
  type Charge,
  type ChargeOutcome,
  type DayUsage,
  type DayUsageRecord,
  type Generation,
  type ImportOptions,
  type IssuedAdminToken,
  type IssuedKey,
  type KeyActivity,
  type KeyChanges,
  type KeyControls,
  type KeyRecord,
  type KeyUsage,
  type Plan,
  type PlanChanges,
  type RotateOptions,
  type StateSnapshot,
  type Store,
  type TokenLease,
  type UsageRecord,
} from "./store.ts";

/** Options of PostgresStore.open. */
export interface PostgresStoreOptions {
  /** The time stamped on keys (created, revoked, rotated); the system clock by default. */
  readonly clock?: () => Date;
  /**
   * Whether a database without iplookup's schema gets it (the default). With false, it
   * is refused with StateNotFoundError and nothing is created.
   */
  readonly create?: boolean;
  /** Connections in the pool (default 5). */
  readonly poolSize?: number;
  /** Seconds to wait for a new connection before giving up (default 5). */
  readonly connectTimeoutSeconds?: number;
  /**
   * How long a charge may wait for its commit, in milliseconds (default 2000): then it
   * rejects with StoreTimeoutError, and was not applied. The statements of its group are
   * given that time by the database itself (statement_timeout): a group that meets a
   * lock or a slow statement is rolled back by the database when its time is up, and
   * its charges reject only then (see AsyncGroupCommit and chargeDeadlineError).
   */
  readonly chargeTimeoutMs?: number;
  /**
   * How long the reads of the request path (generation, findActiveKey, findAdminToken,
   * getKey, getPlan, unitsUsed) may take, in milliseconds (default 2000; 0 for no
   * limit): then they reject with StoreUnavailableError.
   */
  readonly readTimeoutMs?: number;
  /** Charge transactions in flight at once (default 2). */
  readonly chargeGroupsInFlight?: number;
  /**
   * How long a statement may wait for another session's lock, in milliseconds (none by
   * default): then it fails, as StoreUnavailableError. The admin listener sets it, so an
   * admin write that meets a held lock answers 503 instead of waiting without end; a
   * server sets it for its leases of rate-limit tokens (StoreTimeoutError), which then
   * never wait out readTimeoutMs on a locked bucket (a wait the pool would be replaced
   * for, see resetPool). A charge's transaction waits until its own time instead.
   */
  readonly lockTimeoutMs?: number;
  /**
   * For a command that only reads: the schema is checked, never created nor migrated
   * (see checkPostgresSchema), and the sessions are read-only
   * (default_transaction_read_only), so that nothing in the database changes.
   */
  readonly readOnly?: boolean;
}

interface KeyRow extends ControlColumns {
  id: string;
  name: string;
  plan: string;
  created_at: Date;
  revoked_at: Date | null;
}

interface PlanRow {
  name: string;
  max_batch_size: number;
  monthly_units: string | null;
  rate_limit: number | null;
}

type ActiveKeyRow = KeyRow & Omit<PlanRow, "name"> & { secret_hash: string; previous_secret_hash: string | null };

interface AdminTokenRow {
  id: string;
  name: string;
  created_at: Date;
  revoked_at: Date | null;
  read_only: boolean;
}

const KEY_COLUMNS = `id, name, plan, created_at, revoked_at, ${controlColumnList()}`;
const PLAN_COLUMNS = "name, max_batch_size, monthly_units, rate_limit";
const ADMIN_TOKEN_COLUMNS = "id, name, created_at, revoked_at, read_only";
/** Active keys with their plans; a WHERE clause follows. */
const ACTIVE_KEYS = `SELECT k.id, k.name, k.plan, k.created_at, k.revoked_at, ${controlColumnList("k.")}, k.secret_hash, k.previous_secret_hash,
    p.max_batch_size, p.monthly_units, p.rate_limit
  FROM keys k JOIN plans p ON p.name = k.plan`;
/**
 * PostgresStore.leaseTokens: $1 the key, $2 its rate (and burst), $3 the tokens wanted.
 * The SET's values come from one sub-select, so that `clock_timestamp()` is read once,
 * and read when the row is locked (rather than at the start of the statement, as now()
 * is, which a wait for the lock would make stale).
 */
const LEASE_TOKENS = `INSERT INTO rate_buckets AS b (key_id, tokens, granted, updated_at)
  SELECT $1::text, $2::float8 - t.taken, t.taken, clock_timestamp() FROM (SELECT least($3::int4, floor($2::float8))::int4 AS taken) t
  ON CONFLICT (key_id) DO UPDATE SET (tokens, granted, updated_at) = (
    SELECT r.available - r.taken, r.taken, r.at FROM (
      SELECT a.available, least($3::int4, floor(a.available))::int4 AS taken, a.at FROM (
        SELECT least($2::float8, b.tokens + $2::float8 * greatest(0, extract(epoch FROM c.at - b.updated_at)::float8)) AS available, c.at
        FROM (SELECT clock_timestamp() AS at) c
      ) a
    ) r
  )
  RETURNING granted, tokens`;
/**
 * How long a one-statement charge waits for a usage row's lock before it leaves its
 * charges to the group's transaction. The statement cannot see a client that goes away
 * while it waits; the transaction looks at each charge's signal once it holds the lock,
 * and charges nothing for a client gone by then (CONTRACT §13). A lock held by another
 * group is held for a commit, well under a millisecond; one held this long is not.
 */
const QUICK_LOCK_WAIT_MS = 50;
/** The most keys and periods PostgresStore.refusedRows holds before it is emptied. */
const REFUSED_ROWS_KEPT = 10_000;
/** The connection pools of a store: see PostgresStore.sql and quickSql. */
interface Pools {
  readonly sql: SQL;
  readonly quick: SQL;
}
/** Rows a statement of importState carries (each column is one array parameter). */
const IMPORT_CHUNK = 5000;
/** The most charges one transaction carries; more wait for the next. */
const MAX_GROUP = 1000;
/** Charges waiting for a transaction; past that, new ones are refused at once. */
const MAX_QUEUED = 10_000;

/**
 * The Store on a PostgreSQL database, which any number of iplookup servers, on any
 * number of hosts, and the CLI may share.
 *
 * Durability: a charge's promise resolves after COMMIT has answered, and PostgreSQL
 * answers a COMMIT once its WAL is flushed (synchronous_commit, on by default): a server
 * killed at any moment loses no unit it answered for, and neither does the database
 * host if it crashes.
 *
 * Charges are grouped (AsyncGroupCommit): every charge queued while the transactions in
 * flight run goes in the next one. A group's transaction first locks its usage rows, in
 * a fixed order (key, period), creating missing ones, with one INSERT … ON CONFLICT DO
 * UPDATE that returns each row's current units: the row lock keeps every other
 * transaction, from this server or another, off those rows until COMMIT. The charges
 * are then decided in memory in the order they came, and one UPDATE adds what was
 * granted. So a quota check and the charge it allows are one atomic step, and quotas
 * are never overspent across servers; the fixed order of the locks rules out deadlocks
 * between groups. That transaction costs four round trips (BEGIN, lock, update, COMMIT),
 * however many charges it carries; so a group first grants, in one statement of one
 * round trip, the keys whose charges all fit with no usage.threshold line between, and
 * leaves the transaction the others (postgres-quick-charges.ts).
 *
 * Errors that mean the database cannot be reached reject with StoreUnavailableError,
 * whose message names the database without its password; so do a charge and a read of
 * the request path that take longer than their time (chargeTimeoutMs, readTimeoutMs),
 * so that no caller waits without bound while the database is away. The pool connects
 * again by itself when the database is back.
 */
export class PostgresStore implements Store {
  private closing = false;
  private closed = false;
  private readonly charges: AsyncGroupCommit<Charge, ChargeOutcome>;
  /** The pool; replaced by resetPool. */
  private sql: SQL;
  /**
   * The pool of the one-statement charges (postgres-quick-charges.ts), whose connections
   * wait at most QUICK_LOCK_WAIT_MS for a row lock; replaced with the other.
   */
  private quickSql: SQL;
  private lastReset = -Infinity;
  /** Webhooks and the event outbox (see postgres-webhooks.ts). */
  readonly webhooks: PostgresWebhooks;
  /** Charges sent to the one-statement path and granted there, since the start (for measurements and tests). */
  private readonly quick = { tried: 0, granted: 0 };
  /**
   * The keys and periods (rowId) whose last charge the transaction refused for the limit,
   * or found its key gone: left to the transaction until it grants one again (see
   * planQuickCharges). A hint only, so it is simply emptied when it grows past
   * REFUSED_ROWS_KEPT.
   */
  private readonly refusedRows = new Set<string>();

  private constructor(
    pools: Pools,
    /** Makes new pools. */
    private readonly connect: () => Pools,
    /** The URL without its password, for messages. */
    readonly label: string,
    private readonly clock: () => Date,
    chargeTimeoutMs: number,
    private readonly readTimeoutMs: number,
    groupsInFlight: number,
    /** Connections of the pool that reads use. */
    private readonly poolSize: number,
  ) {
    this.sql = pools.sql;
    this.quickSql = pools.quick;
    this.webhooks = new PostgresWebhooks({ sql: () => this.sql, guard: (work) => this.guard(work), read: (work) => this.read(work), clock });
    this.charges = new AsyncGroupCommit((group, deadline) => this.guard(() => this.applyGroup(group, deadline)), {
      maxInFlight: groupsInFlight,
      maxGroupSize: MAX_GROUP,
      maxQueued: MAX_QUEUED,
      timeoutMs: chargeTimeoutMs,
      timeoutError: (reason) =>
        new (reason === "timeout" ? StoreTimeoutError : StoreUnavailableError)(
          reason === "timeout"
            ? `the state database at ${label} did not commit a charge within ${chargeTimeoutMs} ms`
            : `the state database at ${label} is not keeping up: ${MAX_QUEUED} charges are waiting`,
        ),
      // Past every statement's time (the deadline's, each bounded by chargeTimeoutMs): a
      // group still without an outcome then is on a connection gone silent.
      abandonAfterMs: chargeTimeoutMs > 0 ? Math.max(1000, 2 * chargeTimeoutMs) : 0,
      onAbandon: () => this.resetPool(),
    });
  }

  /**
   * Connects to the database of a `postgres://` or `postgresql://` URL and brings its
   * schema up to date (see migratePostgres; with `readOnly`, only checks it). The
   * database itself must exist.
   */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const label = redactUrl(url);
    const poolSize = options.poolSize ?? 5;
    const groupsInFlight = options.chargeGroupsInFlight ?? 2;
    const chargeTimeoutMs = options.chargeTimeoutMs ?? 2000;
    for (const [name, value, least] of [["poolSize", poolSize, 1], ["chargeGroupsInFlight", groupsInFlight, 1], ["chargeTimeoutMs", chargeTimeoutMs, 0]] as const) {
      if (!Number.isSafeInteger(value) || value < least) throw new RangeError(`${name} must be a whole number of at least ${least} (got ${value})`);
    }
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw new StoreError(`${label} is not a valid PostgreSQL URL`);
    }
    const database = decodeURIComponent(parsed.pathname.replace(/^\//, ""));
    const readTimeoutMs = options.readTimeoutMs ?? 2000;
    if (!Number.isSafeInteger(readTimeoutMs) || readTimeoutMs < 0) throw new RangeError(`readTimeoutMs must be a whole number of at least 0 (got ${readTimeoutMs})`);
    const pool = (max: number, lockTimeoutMs: number | undefined, statementTimeoutMs?: number) => new SQL(url, {
      // Named explicitly: Bun lets PGDATABASE override the database of a URL, and the
      // URL, which the operator wrote for iplookup, is the one that counts.
      ...(database !== "" ? { database } : {}),
      max,
      connectionTimeout: options.connectTimeoutSeconds ?? 5,
      idleTimeout: 60,
      connection: {
        application_name: "iplookup",
        // A host that vanishes without closing its connections (power cut, network
        // partition) would hold its row locks until TCP keepalive notices, hours later;
        // the server ends such a transaction after 10 s of silence.
        idle_in_transaction_session_timeout: 10_000,
        ...(lockTimeoutMs !== undefined ? { lock_timeout: lockTimeoutMs } : {}),
        ...(statementTimeoutMs ? { statement_timeout: statementTimeoutMs } : {}),
        ...(options.readOnly ? { default_transaction_read_only: "on" } : {}),
      },
    });
    const quickLockWaitMs = Math.min(QUICK_LOCK_WAIT_MS, options.lockTimeoutMs ?? Infinity);
    // Bun opens a pool's connections on its first statement: the quick pool's only once
    // something is charged (not in the CLI, the admin API or the webhook sender).
    // The quick pool's statements are charges, each one statement that commits on its
    // own: the database cancels one still running after a charge's time (a slow
    // statement), so that it never commits after its charges were answered 503.
    const connect = (): Pools => ({ sql: pool(poolSize, options.lockTimeoutMs), quick: pool(groupsInFlight, quickLockWaitMs, chargeTimeoutMs) });
    const pools = connect();
    try {
      if (options.readOnly) await checkPostgresSchema(pools.sql, label);
      else await migratePostgres(pools.sql, label, options.create ?? true);
    } catch (error) {
      await Promise.all([pools.sql.close({ timeout: 0 }), pools.quick.close({ timeout: 0 })]);
      throw openError(error, label, database);
    }
    return new PostgresStore(pools, connect, label, options.clock ?? (() => new Date()), chargeTimeoutMs, readTimeoutMs, groupsInFlight, poolSize);
  }

  /**
   * Replaces the pool with a new one, and closes the old one at once: a statement that
   * hangs past its time most likely sits on a connection that a partition (a firewall
   * that forgot it, say) has made silent, which TCP can take a quarter of an hour to
   * notice. The statements still on the old pool reject. At most once a second.
   */
  private resetPool(): void {
    const now = performance.now();
    if (this.closing || now - this.lastReset < 1000) return;
    this.lastReset = now;
    const old = [this.sql, this.quickSql];
    ({ sql: this.sql, quick: this.quickSql } = this.connect());
    for (const pool of old) void pool.close({ timeout: 0 }).catch(() => {});
  }

  /**
   * Since the store opened: the charges committed and the groups that carried them, how
   * many charges were sent to the one-statement path (`quickTried`) and how many it
   * granted (`quick`).
   */
  get chargeStats(): { readonly groups: number; readonly items: number; readonly quick: number; readonly quickTried: number } {
    return { ...this.charges.stats, quick: this.quick.granted, quickTried: this.quick.tried };
  }

  private now(): string {
    return this.clock().toISOString();
  }

  /** Runs a query, turning the errors of an unreachable database into StoreUnavailableError. */
  private async guard<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreError("the store is closed");
    try {
      return await work();
    } catch (error) {
      throw this.unavailable(error);
    }
  }

  /**
   * guard() for statements that only read: one on a broken connection is tried again, on
   * another one (see readPastBrokenConnections). With `bounded`, the read (every try)
   * takes at most readTimeoutMs, and one that hangs that long replaces the pool (see
   * resetPool).
   */
  private read<T>(work: () => Promise<T>, bounded = false): Promise<T> {
    const tried = this.readGuarded(work);
    if (!bounded || this.readTimeoutMs === 0) return tried;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new StoreTimeoutError(`the state database at ${this.label} did not answer within ${this.readTimeoutMs} ms`));
        this.resetPool();
      }, this.readTimeoutMs);
      tried.then(resolve, reject).finally(() => clearTimeout(timer));
    });
  }

  private async readGuarded<T>(work: () => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreError("the store is closed");
    try {
      return await readPastBrokenConnections(work, this.poolSize);
    } catch (error) {
      // Closed while it read: its connections were ended by close(), not lost.
      throw this.closed ? new StoreError("the store is closed") : this.unavailable(error);
    }
  }

  /**
   * The error to throw for a failed statement: StoreUnavailableError for a database that
   * cannot be reached or cannot serve now (see isUnavailable), else the error itself. A
   * write refused by a read-only session replaces the pool (at most once a second, see
   * resetPool): the pool would keep such sessions for as long as they live, after the
   * database takes writes again, or after a failover has moved the URL's name or address
   * to the new primary.
   */
  private unavailable(error: unknown): unknown {
    if (!isUnavailable(error)) return error;
    if (isReadOnly(error)) this.resetPool();
    if (isRefusal(error)) return new StoreRefusedError(`the state database at ${this.label} refused a statement: ${redactUrl((error as Error).message)}`, { cause: error });
    return new StoreUnavailableError(`the state database at ${this.label} cannot be reached: ${redactUrl((error as Error).message)}`, { cause: error });
  }

  async createKey(name: string, plan: string, controls?: KeyControls, audit?: Audit<IssuedKey>): Promise<IssuedKey> {
    const trimmed = name.trim();
    const refused = keyNameError(trimmed);
    if (refused) throw new StoreError(refused);
    const secret = newSecret();
    const kept = applyControlChanges(undefined, controls ?? {});
    const key: ApiKey = { id: newKeyId(), name: trimmed, plan, createdAt: this.now(), revokedAt: null, ...(kept ? { controls: kept } : {}) };
    const values = controlValues(kept);
    const issued = { key, secret };
    return this.guard(() =>
      this.sql.begin(async (tx) => {
        const inserted = await tx`INSERT INTO keys (id, name, plan, secret_hash, created_at, expires_at, allowed_cidrs, allowed_origins, metadata)
          SELECT ${key.id}, ${key.name}, name, ${hashSecret(secret)}, ${key.createdAt}::timestamptz,
            ${values.expiresAt}::timestamptz, ${values.allowedCidrs}, ${values.allowedOrigins}, ${values.metadata} FROM plans WHERE name = ${plan}`;
        // The plan's row takes a share lock from the foreign key, so it cannot vanish between.
        if (inserted.count === 0) throw new StoreError(`there is no plan "${plan}"`);
        await writeChangeRecord(tx, audit?.(issued, null) ?? null);
        return issued;
      }),
    );
  }

  /** Every key, revoked ones included, oldest first. */
  async listKeys(): Promise<ApiKey[]> {
    const rows = await this.read(() => this.sql.unsafe<KeyRow[]>(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, seq`));
    return rows.map(toKey);
  }

  async getKey(id: string): Promise<ApiKey | null> {
    const [row] = await this.read(() => this.sql.unsafe<KeyRow[]>(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = $1`, [id]), true);
    return row ? toKey(row) : null;
  }

  async revokeKey(id: string, audit?: Audit<ApiKey, ApiKey>): Promise<ApiKey | null> {
    return this.revokeRow("keys", KEY_COLUMNS, toKey, id, audit);
  }

  /**
   * Revokes the row `id` of `table` (a key, an admin token) in one transaction with its
   * audit entry, the row locked (FOR UPDATE) so that two servers revoking it at once
   * write one revocation and one entry; one revoked already is left as it was. Null when
   * there is no such row.
   */
  private revokeRow<Row extends { revoked_at: Date | null }, T>(table: "keys" | "admin_tokens", columns: string, view: (row: Row) => T, id: string, audit?: Audit<T, T>): Promise<T | null> {
    return this.guard(() =>
      this.sql.begin(async (tx) => {
        const [row] = await tx.unsafe<Row[]>(`SELECT ${columns} FROM ${table} WHERE id = $1 FOR UPDATE`, [id]);
        if (!row) return null;
        const before = view(row);
        let after = before;
        if (row.revoked_at === null) {
          const [revoked] = await tx.unsafe<Row[]>(`UPDATE ${table} SET revoked_at = $2::timestamptz WHERE id = $1 RETURNING ${columns}`, [id, this.now()]);
          after = view(revoked!);
        }
        await writeChangeRecord(tx, audit?.(after, before) ?? null);
        return after;
      }),
    );
  }

  async rotateKey(id: string, options: RotateOptions = {}, audit?: Audit<IssuedKey, ApiKey>): Promise<IssuedKey | null> {
    const secret = newSecret();
    const now = this.clock();
    const graceUntil = options.graceMs ? new Date(now.getTime() + options.graceMs).toISOString() : null;
    return this.guard(() =>
      this.sql.begin(async (tx) => {
        const [before] = await tx.unsafe<KeyRow[]>(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = $1 FOR UPDATE`, [id]);
        if (!before || before.revoked_at !== null) return null;
        // With a grace, the secret being replaced becomes the previous one (and the one an
        // earlier grace kept stops); without, both stop at once.
        const [row] = await tx.unsafe<KeyRow[]>(
          `UPDATE keys SET previous_secret_hash = CASE WHEN $4::timestamptz IS NULL THEN NULL ELSE secret_hash END, grace_until = $4::timestamptz,
             secret_hash = $2, rotated_at = $3::timestamptz
           WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
          [id, hashSecret(secret), now.toISOString(), graceUntil],
        );
        const issued = { key: toKey(row!), secret };
        await writeChangeRecord(tx, audit?.(issued, toKey(before)) ?? null);
        return issued;
      }),
    );
  }

  async setKeyPlan(id: string, plan: string, audit?: Audit<ApiKey, ApiKey>): Promise<ApiKey | null> {
    return this.guard(() =>
      this.sql.begin(async (tx) => {
        // FOR UPDATE: the key cannot be revoked, nor moved by another process, between
        // the checks and the update; the plan's row is share-locked by the foreign key.
        const [row] = await tx.unsafe<KeyRow[]>(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = $1 FOR UPDATE`, [id]);
        if (!row) return null;
        if (row.revoked_at !== null) throw new StoreError(`key ${id} was revoked on ${row.revoked_at.toISOString()}; a revoked key keeps its plan`);
        const [known] = await tx`SELECT 1 AS yes FROM plans WHERE name = ${plan} FOR KEY SHARE`;
        if (!known) throw new StoreError(`there is no plan "${plan}"`);
        // Only a real change writes: an UPDATE to the same value would still move the
        // change counter and make every server reload its keys for nothing.
        const before = toKey(row);
        const after = row.plan === plan ? before : toKey({ ...row, plan });
        if (after !== before) await tx`UPDATE keys SET plan = ${plan} WHERE id = ${id}`;
        await writeChangeRecord(tx, audit?.(after, before) ?? null);
        return after;
      }),
    );
  }

  /** Every plan, by name. */
  async listPlans(): Promise<Plan[]> {
    const rows = await this.read(() => this.sql.unsafe<PlanRow[]>(`SELECT ${PLAN_COLUMNS} FROM plans ORDER BY name COLLATE "C"`));
    return rows.map(toPlan);
  }

  async getPlan(name: string): Promise<Plan | null> {
    const [row] = await this.read(() => this.sql.unsafe<PlanRow[]>(`SELECT ${PLAN_COLUMNS} FROM plans WHERE name = $1`, [name]), true);
    return row ? toPlan(row) : null;
  }

  async setPlan(name: string, changes: PlanChanges, audit?: Audit<Plan, Plan | null>): Promise<Plan> {
    return this.guard(() =>
      this.sql.begin(async (tx) => {
        // The plan's row locked, or else the new plan inserted; an insert that meets
        // another writer's of the same name waits for it and then changes that plan. A
        // SELECT … FOR UPDATE alone locks nothing while there is no row, and two first
        // writes would both record a creation, the second over the first's limits.
        for (;;) {
          const [existing] = await tx.unsafe<PlanRow[]>(`SELECT ${PLAN_COLUMNS} FROM plans WHERE name = $1 FOR UPDATE`, [name]);
          const before = existing ? toPlan(existing) : null;
          const plan = applyPlanChanges(name, before, changes);
          if (before === null) {
            const [inserted] = await tx`INSERT INTO plans (name, max_batch_size, monthly_units, rate_limit)
              VALUES (${plan.name}, ${plan.maxBatchSize}, ${plan.monthlyUnits}, ${plan.rateLimit})
              ON CONFLICT (name) DO NOTHING RETURNING name`;
            // Inserted meanwhile by another writer: change that plan instead.
            if (!inserted) continue;
          } else if (!samePlan(before, plan)) {
            // Only a real change writes (and moves the change counter, which makes every
            // server reload its keys).
            await tx`UPDATE plans SET max_batch_size = ${plan.maxBatchSize}, monthly_units = ${plan.monthlyUnits}, rate_limit = ${plan.rateLimit} WHERE name = ${plan.name}`;
          }
          await writeChangeRecord(tx, audit?.(plan, before) ?? null);
          return plan;
        }
      }),
    );
  }


  async generation(): Promise<Generation> {
    const [row] = await this.read(() => this.sql<GenerationRow[]>`SELECT value, store_id FROM generation WHERE id = 1`, true);
    return toGeneration(row, `the state database at ${this.label}`);
  }

  async authSnapshot(): Promise<AuthSnapshot> {
    // One snapshot for both reads: a change committed between them would otherwise give
    // new keys with the old generation, or old keys with the new one (and that change
    // would never be reloaded).
    return this.read(() =>
      this.sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
        const [counter] = await tx<GenerationRow[]>`SELECT value, store_id FROM generation WHERE id = 1`;
        const generation = toGeneration(counter, `the state database at ${this.label}`);
        const rows = await tx.unsafe<ActiveKeyRow[]>(`${ACTIVE_KEYS} WHERE k.revoked_at IS NULL`);
        const keysByHash = new Map<string, ActiveKey>();
        for (const row of rows) {
          const active = toActiveKey(row);
          keysByHash.set(row.secret_hash, active);
          if (row.previous_secret_hash !== null) keysByHash.set(row.previous_secret_hash, previousSecret(active));
        }
        return { generation, keysByHash };
      }),
    );
  }

  async findActiveKey(secretHash: string): Promise<ActiveKey | null> {
    const [row] = await this.read(
      () => this.sql.unsafe<ActiveKeyRow[]>(`${ACTIVE_KEYS} WHERE (k.secret_hash = $1 OR k.previous_secret_hash = $1) AND k.revoked_at IS NULL`, [secretHash]),
      true,
    );
    if (!row) return null;
    return row.secret_hash === secretHash ? toActiveKey(row) : previousSecret(toActiveKey(row));
  }

  /**
   * One statement, so one round trip and one row lock: the key's bucket is refilled by
   * the time since its last lease (on the database's clock, read once, after the row is
   * locked, so that every server's leases are measured on one clock and in the order
   * they took the lock) and capped at one second's worth, then up to `wanted` whole
   * tokens are taken. A missing bucket starts full. A clock that stepped back refills
   * nothing. A bounded read of the request path (readTimeoutMs), tried again on a
   * broken connection: a lease taken more than once only leaves the key fewer tokens,
   * never more.
   */
  async leaseTokens(keyId: string, ratePerSecond: number, wanted: number): Promise<TokenLease> {
    if (!(ratePerSecond > 0) || !Number.isSafeInteger(wanted) || wanted < 0) throw new RangeError(`cannot lease ${wanted} tokens at ${ratePerSecond} a second`);
    let rows: { granted: number; tokens: number }[];
    try {
      rows = await this.read(() => this.sql.unsafe<{ granted: number; tokens: number }[]>(LEASE_TOKENS, [keyId, ratePerSecond, wanted]), true);
    } catch (error) {
      // The bucket stayed locked past the pool's lock_timeout (another session's lock):
      // these requests wait no longer, and the database is not said to be away for it.
      const sqlstate = sqlstateOf((error as { cause?: unknown } | undefined)?.cause ?? error);
      if (sqlstate === "55P03" || sqlstate === "57014") throw new StoreTimeoutError(`the state database at ${this.label} did not lease rate-limit tokens in time: ${(error as Error).message}`, { cause: error });
      throw error;
    }
    const [row] = rows;
    return { granted: Number(row!.granted), available: Number(row!.tokens) };
  }

  /**
   * A row lock on the change counter's row (FOR KEY SHARE: no writer of the counter waits
   * for it), which a read-only transaction refuses (25006: a standby, default_transaction_read_only)
   * as it would a charge; it commits at once and changes nothing. A bounded read of the
   * request path.
   */
  async probeWrite(): Promise<void> {
    await this.read(() => this.sql`SELECT 1 AS taken FROM generation WHERE id = 1 FOR KEY SHARE`, true);
  }

  charge(charge: Charge): Promise<ChargeOutcome> {
    if (this.closing) return Promise.reject(new StoreError("the store is closed"));
    const refused = chargeError(charge);
    if (refused) return Promise.reject(refused);
    return this.charges.submit(charge);
  }

  /**
   * One group: the keys whose charges can be granted together in one statement first
   * (postgres-quick-charges.ts), then the rest in the group's transaction. When the
   * transaction fails after the statement has committed, only its own charges fail.
   *
   * Everything ends by `deadline` (performance.now()), the time of the group's first
   * charge, and is known rolled back when it fails: the one statement is cancelled by
   * the database after chargeTimeoutMs (its pool's statement_timeout), the transaction
   * is given what is left of the time (SET LOCAL statement_timeout, lock waits
   * included), and a statement is not sent once the time is up (the transaction then
   * rolls back; its COMMIT was never sent). A charge answered 503 for its time was not
   * applied, and one applied is answered as such, late or not.
   */
  private async applyGroup(group: readonly Charge[], deadline: number): Promise<(ChargeOutcome | ItemFailure)[]> {
    try {
      return await this.applyGroupBy(group, deadline);
    } catch (error) {
      throw this.chargeDeadlineError(error);
    }
  }

  private async applyGroupBy(group: readonly Charge[], deadline: number): Promise<(ChargeOutcome | ItemFailure)[]> {
    let nowMs: number | undefined;
    this.checkDeadline(deadline);
    const plan = planQuickCharges(group, () => (nowMs ??= this.clock().getTime()), this.refusedRows);
    if (plan.rows.length === 0) return this.decideInTransaction(group, deadline);
    const outcomes: ChargeOutcome[] = new Array(group.length);
    this.quick.tried += group.length - plan.rest.length;
    const rest = [...plan.rest, ...(await chargeQuickRows(this.quickSql, group, plan.rows, outcomes))].sort((a, b) => a - b);
    this.quick.granted += group.length - rest.length;
    if (rest.length === 0) return outcomes;
    // Nothing of the group committed yet: it succeeds or fails as one, as before.
    if (rest.length === group.length) return this.decideInTransaction(group, deadline);
    try {
      const decided = await this.decideInTransaction(
        rest.map((position) => group[position]!),
        deadline,
      );
      rest.forEach((position, i) => (outcomes[position] = decided[i]!));
      return outcomes;
    } catch (error) {
      const failure = new ItemFailure(this.chargeDeadlineError(this.unavailable(error)));
      return group.map((_, position) => outcomes[position] ?? failure);
    }
  }

  /** Throws ChargeDeadline once the group's time is up: what was not sent by then never will be. */
  private checkDeadline(deadline: number): void {
    if (performance.now() >= deadline) throw new ChargeDeadline();
  }

  /**
   * A charge group's failure for its time (a statement cancelled by its statement_timeout,
   * 57014, or not sent, ChargeDeadline) as the StoreTimeoutError of a charge that waited
   * too long; any other error as it is.
   */
  private chargeDeadlineError(error: unknown): unknown {
    const cause = error instanceof StoreUnavailableError ? error.cause : error;
    if (error instanceof StoreTimeoutError) return error;
    if (cause instanceof ChargeDeadline || sqlstateOf(cause) === "57014") {
      return new StoreTimeoutError(`the state database at ${this.label} did not commit a charge within its time; it was not applied`, { cause });
    }
    return error;
  }

  /** applyGroupInTransaction, noting which keys it refused for their limit (refusedRows). */
  private async decideInTransaction(group: readonly Charge[], deadline: number): Promise<ChargeOutcome[]> {
    this.checkDeadline(deadline);
    const outcomes = await this.applyGroupInTransaction(group, deadline);
    if (this.refusedRows.size > REFUSED_ROWS_KEPT) this.refusedRows.clear();
    group.forEach(({ keyId, period }, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) this.refusedRows.delete(rowId(keyId, period));
      else if (!outcome.gone) this.refusedRows.add(rowId(keyId, period));
    });
    return outcomes;
  }

  /**
   * A group's transaction (chargeInTransaction), made again when a key of the group was
   * deleted meanwhile: between the statement's snapshot, which still held it, and its
   * foreign key's check (23503). Nothing was written; the new transaction finds it gone.
   */
  private async applyGroupInTransaction(group: readonly Charge[], deadline: number): Promise<ChargeOutcome[]> {
    for (;;) {
      try {
        return await this.chargeInTransaction(group, deadline);
      } catch (error) {
        if (sqlstateOf(error) !== "23503") throw error;
      }
    }
  }

  /**
   * A group's transaction, one charge at a time (see the class comment). Only the usage
   * rows of keys the database still holds are locked: the charges of a key gone (deleted
   * behind the servers' backs while their key caches still held it) charge nothing, and
   * the others are decided as if they were alone.
   */
  private chargeInTransaction(group: readonly Charge[], deadline: number): Promise<ChargeOutcome[]> {
    const usage = new Map<string, { keyId: string; period: string; known: boolean; used: number; added: number }>();
    for (const { keyId, period } of group) if (!usage.has(rowId(keyId, period))) usage.set(rowId(keyId, period), { keyId, period, known: false, used: 0, added: 0 });
    // The charges that moved a key's units across a usage.threshold line (rare).
    const crossings: UsageCrossing[] = [];
    const rows = [...usage.values()];
    const days = new DayTally();
    let nowMs: number | undefined;
    return this.sql.begin(async (tx) => {
      // The rest of the group's time for each statement, lock waits included (the pool's
      // lock_timeout, if any, gives way to it): a round trip, but only on this path.
      const left = String(Math.max(1, Math.floor(deadline - performance.now())));
      if (Number.isFinite(deadline)) await tx`SELECT set_config('statement_timeout', ${left}, true), set_config('lock_timeout', '0', true)`;
      this.checkDeadline(deadline);
      const locked = await tx`INSERT INTO usage (key_id, period, used)
        SELECT k, p, 0 FROM unnest(${tx.array(rows.map((row) => row.keyId), "TEXT")}, ${tx.array(rows.map((row) => row.period), "TEXT")}) AS t(k, p)
        WHERE EXISTS (SELECT FROM keys WHERE keys.id = t.k)
        ORDER BY k COLLATE "C", p COLLATE "C"
        ON CONFLICT (key_id, period) DO UPDATE SET used = usage.used
        RETURNING key_id, period, used`;
      for (const row of locked) {
        const held = usage.get(rowId(row.key_id, row.period))!;
        held.known = true;
        held.used = Number(row.used);
      }
      const outcomes = group.map(({ keyId, period, units, limit, at, signal }): ChargeOutcome => {
        const row = usage.get(rowId(keyId, period))!;
        if (signal?.aborted) return { ok: false, used: row.used, gone: true };
        if (!row.known) return { ok: false, used: 0, keyGone: true };
        if (units === 0) return { ok: true, used: row.used };
        if (limit !== null && row.used + units > limit) return { ok: false, used: row.used };
        row.used += units;
        row.added += units;
        if (crossesThreshold(row.used - units, row.used, limit)) crossings.push({ keyId, period, before: row.used - units, after: row.used, limit });
        days.add(keyId, units, at ?? (nowMs ??= this.clock().getTime()));
        return { ok: true, used: row.used };
      });
      const added = rows.filter((row) => row.added > 0);
      this.checkDeadline(deadline);
      if (added.length > 0) {
        // One statement, so the group still costs four round trips: the units, and the
        // same charges by key and day (a data-modifying WITH runs whether or not it is
        // read). The day rows are locked in a fixed order too, and only by a transaction
        // that holds the lock on their key's usage row already.
        const dayRows = days.list();
        await tx`WITH units AS (
            UPDATE usage SET used = usage.used + d.added
            FROM unnest(${tx.array(added.map((row) => row.keyId), "TEXT")}, ${tx.array(added.map((row) => row.period), "TEXT")}, ${tx.array(added.map((row) => row.added), "INT8")}) AS d(k, p, added)
            WHERE usage.key_id = d.k AND usage.period = d.p
          )
          INSERT INTO usage_days (key_id, day, requests, units, last_used_at)
          SELECT k, d::date, r, u, l::timestamptz
          FROM unnest(${tx.array(dayRows.map((row) => row.keyId), "TEXT")}, ${tx.array(dayRows.map((row) => row.day), "TEXT")}, ${tx.array(dayRows.map((row) => row.requests), "INT8")},
                      ${tx.array(dayRows.map((row) => row.units), "INT8")}, ${tx.array(dayRows.map((row) => row.lastUsedAt), "TEXT")}) AS t(k, d, r, u, l)
          ORDER BY k COLLATE "C", d
          ON CONFLICT (key_id, day) DO UPDATE SET requests = usage_days.requests + excluded.requests, units = usage_days.units + excluded.units,
            last_used_at = greatest(usage_days.last_used_at, excluded.last_used_at)`;
        // usage.threshold events, in this same transaction (a round trip only when a
        // line was crossed): see usage-thresholds.ts.
        await recordCrossings(tx, crossings, () => new Date((nowMs ??= this.clock().getTime())));
        // The COMMIT goes only within the time.
        this.checkDeadline(deadline);
      }
      return outcomes;
    });
  }

  async unitsUsed(keyId: string, period: string): Promise<number> {
    const [row] = await this.read(() => this.sql`SELECT used FROM usage WHERE key_id = ${keyId} AND period = ${period}`, true);
    return row ? Number(row.used) : 0;
  }

  async usageByDay(from: string, to: string, keyId?: string): Promise<DayUsage[]> {
    const rows = await this.read(() =>
      keyId === undefined
        ? this.sql`SELECT day::text AS day, sum(requests) AS requests, sum(units) AS units FROM usage_days
            WHERE day BETWEEN ${from}::date AND ${to}::date GROUP BY day ORDER BY day`
        : this.sql`SELECT day::text AS day, sum(requests) AS requests, sum(units) AS units FROM usage_days
            WHERE day BETWEEN ${from}::date AND ${to}::date AND key_id = ${keyId} GROUP BY day ORDER BY day`,
    );
    return rows.map((row: { day: string; requests: string; units: string }) => ({ day: row.day, requests: Number(row.requests), units: Number(row.units) }));
  }

  async usageByKey(from: string, to: string): Promise<KeyUsage[]> {
    const rows = await this.read(
      () => this.sql`SELECT d.key_id, k.name, sum(d.requests) AS requests, sum(d.units) AS units
        FROM usage_days d JOIN keys k ON k.id = d.key_id WHERE d.day BETWEEN ${from}::date AND ${to}::date
        GROUP BY d.key_id, k.name ORDER BY units DESC, d.key_id COLLATE "C"`,
    );
    return rows.map((row: { key_id: string; name: string; requests: string; units: string }) => ({
      keyId: row.key_id,
      name: row.name,
      requests: Number(row.requests),
      units: Number(row.units),
    }));
  }

  async keyActivity(period: string): Promise<KeyActivity[]> {
    const rows = await this.read(
      () => this.sql`SELECT k.id AS key_id, u.used AS units, (SELECT max(d.last_used_at) FROM usage_days d WHERE d.key_id = k.id) AS last_used_at
        FROM keys k LEFT JOIN usage u ON u.key_id = k.id AND u.period = ${period} ORDER BY k.created_at, k.seq`,
    );
    return rows.map((row: { key_id: string; units: string | null; last_used_at: Date | null }) => ({
      keyId: row.key_id,
      units: row.units === null ? 0 : Number(row.units),
      lastUsedAt: row.last_used_at?.toISOString() ?? null,
    }));
  }

  async createAdminToken(name: string, audit?: Audit<IssuedAdminToken>): Promise<IssuedAdminToken> {
    return this.insertAdminToken(name, false, audit);
  }

  private async insertAdminToken(name: string, readOnly: boolean, audit: Audit<IssuedAdminToken> | undefined): Promise<IssuedAdminToken> {
    const trimmed = name.trim();
    const refused = keyNameError(trimmed);
    if (refused) throw new StoreError(refused.replace("a key name", "an admin token's name"));
    const secret = newAdminSecret();
    const token: AdminToken = { id: newAdminTokenId(), name: trimmed, createdAt: this.now(), revokedAt: null, ...(readOnly ? { readOnly: true as const } : {}) };
    const issued = { token, secret };
    return this.guard(() =>
      this.sql.begin(async (tx) => {
        await tx`INSERT INTO admin_tokens (id, name, secret_hash, created_at, read_only)
          VALUES (${token.id}, ${token.name}, ${hashSecret(secret)}, ${token.createdAt}::timestamptz, ${readOnly})`;
        await writeChangeRecord(tx, audit?.(issued, null) ?? null);
        return issued;
      }),
    );
  }

  async listAdminTokens(): Promise<AdminToken[]> {
    const rows = await this.read(() => this.sql.unsafe<AdminTokenRow[]>(`SELECT ${ADMIN_TOKEN_COLUMNS} FROM admin_tokens ORDER BY created_at, seq`));
    return rows.map(toAdminToken);
  }

  async getAdminToken(id: string): Promise<AdminToken | null> {
    const [row] = await this.read(() => this.sql.unsafe<AdminTokenRow[]>(`SELECT ${ADMIN_TOKEN_COLUMNS} FROM admin_tokens WHERE id = $1`, [id]));
    return row ? toAdminToken(row) : null;
  }

  async revokeAdminToken(id: string, audit?: Audit<AdminToken, AdminToken>): Promise<AdminToken | null> {
    return this.revokeRow("admin_tokens", ADMIN_TOKEN_COLUMNS, toAdminToken, id, audit);
  }

  async findAdminToken(secretHash: string): Promise<AdminToken | null> {
    const [row] = await this.read(
      () => this.sql.unsafe<AdminTokenRow[]>(`SELECT ${ADMIN_TOKEN_COLUMNS} FROM admin_tokens WHERE secret_hash = $1 AND revoked_at IS NULL`, [secretHash]),
      true,
    );
    return row ? toAdminToken(row) : null;
  }

  async exportState(): Promise<StateSnapshot> {
    return this.read(() =>
      this.sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
        const plans = (await tx.unsafe<PlanRow[]>(`SELECT ${PLAN_COLUMNS} FROM plans ORDER BY name COLLATE "C"`)).map(toPlan);
        const keys = (
          await tx.unsafe<(KeyRow & { secret_hash: string; rotated_at: Date | null; previous_secret_hash: string | null })[]>(
            `SELECT ${KEY_COLUMNS}, secret_hash, rotated_at, previous_secret_hash FROM keys ORDER BY created_at, seq`,
          )
        ).map((row): KeyRecord => ({
          ...toKey(row),
          secretHash: row.secret_hash,
          rotatedAt: row.rotated_at?.toISOString() ?? null,
          ...(row.previous_secret_hash !== null ? { previousSecretHash: row.previous_secret_hash } : {}),
        }));
        const usage = (await tx`SELECT u.key_id, u.period, u.used FROM usage u JOIN keys k ON k.id = u.key_id WHERE u.used > 0 ORDER BY k.created_at, k.seq, u.period`).map(
          (row: { key_id: string; period: string; used: string }): UsageRecord => ({ keyId: row.key_id, period: row.period, used: Number(row.used) }),
        );
        const days = (
          await tx`SELECT d.key_id, d.day::text AS day, d.requests, d.units, d.last_used_at FROM usage_days d JOIN keys k ON k.id = d.key_id ORDER BY k.created_at, k.seq, d.day`
        ).map(
          (row: { key_id: string; day: string; requests: string; units: string; last_used_at: Date }): DayUsageRecord => ({
            keyId: row.key_id,
            day: row.day,
            requests: Number(row.requests),
            units: Number(row.units),
            lastUsedAt: row.last_used_at.toISOString(),
          }),
        );
        const adminTokens = (await tx.unsafe<(AdminTokenRow & { secret_hash: string })[]>(`SELECT ${ADMIN_TOKEN_COLUMNS}, secret_hash FROM admin_tokens ORDER BY created_at, seq`)).map(
          (row): AdminTokenRecord => ({ ...toAdminToken(row), secretHash: row.secret_hash }),
        );
        const audit = (await tx.unsafe<AuditRow[]>("SELECT at, actor, action, target, changes FROM audit_log ORDER BY at, seq")).map(toAuditEntry);
        return { plans, keys, usage, days, adminTokens, corrections: await corrections.listCorrections(tx), audit, webhooks: await exportWebhookRows(tx), onceEvents: await exportOnceEvents(tx) };
      }),
    );
  }

  async importState(snapshot: StateSnapshot, options: ImportOptions = {}): Promise<void> {
    checkSnapshot(snapshot);
    await this.guard(() =>
      this.sql.begin(async (tx) => {
        // EXCLUSIVE: nobody writes these tables until COMMIT (readers carry on), so no key
        // appears between the check and the copy, and running servers' charges wait.
        await tx`LOCK TABLE plans, keys, usage, usage_days, admin_tokens, corrections, audit_log, webhooks IN EXCLUSIVE MODE`;
        const [held] = await tx`SELECT count(*)::int AS n FROM keys`;
        if (held.n > 0 && !options.replace) {
          throw new StoreError(`${this.label} holds ${held.n} key${held.n === 1 ? "" : "s"} already; copy into an empty store, or replace what it holds`);
        }
        const [heldCorrections] = await tx`SELECT count(*)::int AS n FROM corrections`;
        if (heldCorrections.n > 0 && !options.replace) {
          throw new StoreError(`${this.label} holds ${heldCorrections.n} correction${heldCorrections.n === 1 ? "" : "s"} already; copy into an empty store, or replace what it holds`);
        }
        // The webhook tables first: see importWebhookRows.
        await importWebhookRows(tx, snapshot.webhooks ?? [], options.replace === true, snapshot.onceEvents ?? []);
        if (options.replace) {
          await tx`DELETE FROM corrections`;
          await tx`DELETE FROM usage_days`;
          await tx`DELETE FROM admin_tokens`;
          await tx`DELETE FROM audit_log`;
          await tx`DELETE FROM usage`;
          await tx`DELETE FROM keys`;
          await tx`DELETE FROM plans`;
        }
        for (const plans of chunks(snapshot.plans)) {
          await tx`INSERT INTO plans (name, max_batch_size, monthly_units, rate_limit)
            SELECT * FROM unnest(${tx.array(plans.map((p) => p.name), "TEXT")}, ${tx.array(plans.map((p) => p.maxBatchSize), "INT4")},
                                 ${tx.array(plans.map((p) => p.monthlyUnits), "INT8")}, ${tx.array(plans.map((p) => p.rateLimit), "INT4")})
            ON CONFLICT (name) DO UPDATE SET max_batch_size = excluded.max_batch_size, monthly_units = excluded.monthly_units, rate_limit = excluded.rate_limit`;
        }
        for (const keys of chunks(snapshot.keys)) {
          // In the snapshot's order, which seq keeps: keys created in the same millisecond list as they did.
          const values = keys.map((k) => controlValues(k.controls));
          await tx`INSERT INTO keys (id, name, plan, secret_hash, created_at, revoked_at, rotated_at,
              expires_at, allowed_cidrs, allowed_origins, metadata, previous_secret_hash, grace_until)
            SELECT id, name, plan, secret_hash, created_at::timestamptz, revoked_at::timestamptz, rotated_at::timestamptz,
              expires_at::timestamptz, allowed_cidrs, allowed_origins, metadata, previous_secret_hash, grace_until::timestamptz
            FROM unnest(${tx.array(keys.map((k) => k.id), "TEXT")}, ${tx.array(keys.map((k) => k.name), "TEXT")}, ${tx.array(keys.map((k) => k.plan), "TEXT")},
                        ${tx.array(keys.map((k) => k.secretHash), "TEXT")}, ${tx.array(keys.map((k) => k.createdAt), "TEXT")},
                        ${tx.array(keys.map((k) => k.revokedAt), "TEXT")}, ${tx.array(keys.map((k) => k.rotatedAt), "TEXT")},
                        ${tx.array(values.map((v) => v.expiresAt), "TEXT")}, ${tx.array(values.map((v) => v.allowedCidrs), "TEXT")},
                        ${tx.array(values.map((v) => v.allowedOrigins), "TEXT")}, ${tx.array(values.map((v) => v.metadata), "TEXT")},
                        ${tx.array(keys.map((k) => k.previousSecretHash ?? null), "TEXT")},
                        ${tx.array(keys.map((k) => (k.previousSecretHash ? (k.graceUntil ?? null) : null)), "TEXT")})
              WITH ORDINALITY AS t(id, name, plan, secret_hash, created_at, revoked_at, rotated_at,
                expires_at, allowed_cidrs, allowed_origins, metadata, previous_secret_hash, grace_until, n)
            ORDER BY n`;
        }
        for (const usage of chunks(snapshot.usage)) {
          await tx`INSERT INTO usage (key_id, period, used)
            SELECT * FROM unnest(${tx.array(usage.map((u) => u.keyId), "TEXT")}, ${tx.array(usage.map((u) => u.period), "TEXT")}, ${tx.array(usage.map((u) => u.used), "INT8")})`;
        }
        for (const days of chunks(snapshot.days ?? [])) {
          await tx`INSERT INTO usage_days (key_id, day, requests, units, last_used_at)
            SELECT k, d::date, r, u, l::timestamptz
            FROM unnest(${tx.array(days.map((d) => d.keyId), "TEXT")}, ${tx.array(days.map((d) => d.day), "TEXT")}, ${tx.array(days.map((d) => d.requests), "INT8")},
                        ${tx.array(days.map((d) => d.units), "INT8")}, ${tx.array(days.map((d) => d.lastUsedAt), "TEXT")}) AS t(k, d, r, u, l)`;
        }
        for (const tokens of chunks(snapshot.adminTokens ?? [])) {
          await tx`INSERT INTO admin_tokens (id, name, secret_hash, created_at, revoked_at, read_only)
            SELECT id, name, secret_hash, created_at::timestamptz, revoked_at::timestamptz, read_only
            FROM unnest(${tx.array(tokens.map((t) => t.id), "TEXT")}, ${tx.array(tokens.map((t) => t.name), "TEXT")}, ${tx.array(tokens.map((t) => t.secretHash), "TEXT")},
                        ${tx.array(tokens.map((t) => t.createdAt), "TEXT")}, ${tx.array(tokens.map((t) => t.revokedAt), "TEXT")},
                        ${tx.array(tokens.map((t) => t.readOnly === true), "BOOL")})
              WITH ORDINALITY AS t(id, name, secret_hash, created_at, revoked_at, read_only, n)
            ORDER BY n`;
        }
        // Scrubbed on the way in: an entry from before the log scrubbed all of it may hold a secret.
        for (const entries of chunks((snapshot.audit ?? []).map(scrubEntry))) {
          await tx`INSERT INTO audit_log (at, actor, action, target, changes)
            SELECT at::timestamptz, actor, action, target, changes
            FROM unnest(${tx.array(entries.map((a) => a.at), "TEXT")}, ${tx.array(entries.map((a) => a.actor), "TEXT")}, ${tx.array(entries.map((a) => a.action), "TEXT")},
                        ${tx.array(entries.map((a) => a.target), "TEXT")}, ${tx.array(entries.map((a) => JSON.stringify(a.changes)), "TEXT")})
              WITH ORDINALITY AS t(at, actor, action, target, changes, n)
            ORDER BY n`;
        }
        await corrections.insertCorrections(tx, snapshot.corrections ?? []);
        await writeChangeRecord(tx, options.audit?.(snapshot, null) ?? null);
      }),
    );
  }

  async listCorrections(): Promise<Correction[]> {
    return this.read(() => corrections.listCorrections(this.sql));
  }

  async correctionSnapshot(): Promise<CorrectionSnapshot> {
    return this.read(() => corrections.correctionSnapshot(this.sql));
  }

  async putCorrection(cidr: string, fields: CorrectionFields, note: string | null, audit?: Audit<Correction, Correction | null>): Promise<Correction> {
    return this.guard(() => corrections.putCorrection(this.sql, cidr, fields, note, this.now(), (tx, after, before) => writeChangeRecord(tx, audit?.(after, before) ?? null)));
  }

  async removeCorrection(cidr: string, audit?: Audit<Correction>): Promise<Correction | null> {
    return this.guard(() => corrections.removeCorrection(this.sql, cidr, (tx, removed) => writeChangeRecord(tx, audit?.(removed, null) ?? null)));
  }

  // Key controls, read-only admin tokens and the audit log (CONTRACT §16).

  async updateKey(id: string, changes: KeyChanges, audit?: Audit<ApiKey, ApiKey>): Promise<ApiKey | null> {
    return this.guard(() =>
      this.sql.begin(async (tx) => {
        // FOR UPDATE, as setKeyPlan: nobody revokes or changes the key between the checks and the update.
        const [row] = await tx.unsafe<KeyRow[]>(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = $1 FOR UPDATE`, [id]);
        if (!row) return null;
        if (row.revoked_at !== null) throw new StoreError(`key ${id} was revoked on ${row.revoked_at.toISOString()}; a revoked key cannot be changed`);
        const plan = changes.plan ?? row.plan;
        if (plan !== row.plan) {
          const [known] = await tx`SELECT 1 AS yes FROM plans WHERE name = ${plan} FOR KEY SHARE`;
          if (!known) throw new StoreError(`there is no plan "${plan}"`);
        }
        const current = toKey(row);
        const before = controlValues(current.controls);
        const controls = applyControlChanges(current.controls, changes);
        const after = controlValues(controls);
        // Only a real change writes (and moves the change counter).
        let updated = current;
        if (plan !== row.plan || !sameControlValues(before, after)) {
          const [written] = await tx.unsafe<KeyRow[]>(
            `UPDATE keys SET plan = $2, expires_at = $3::timestamptz, allowed_cidrs = $4, allowed_origins = $5, metadata = $6 WHERE id = $1 RETURNING ${KEY_COLUMNS}`,
            [id, plan, after.expiresAt, after.allowedCidrs, after.allowedOrigins, after.metadata],
          );
          updated = toKey(written!);
        }
        await writeChangeRecord(tx, audit?.(updated, current) ?? null);
        return updated;
      }),
    );
  }

  async createReadOnlyAdminToken(name: string, audit?: Audit<IssuedAdminToken>): Promise<IssuedAdminToken> {
    return this.insertAdminToken(name, true, audit);
  }

  async listAudit(from: string, to: string, limit: number): Promise<AuditEntry[]> {
    return (await this.pageAudit(from, to, limit, null)).entries;
  }

  async pageAudit(from: string, to: string, limit: number, before: AuditPosition | null): Promise<AuditPage> {
    // One more than asked for: whether older entries follow, without counting them.
    const rows = await this.read(() =>
      this.sql.unsafe<AuditPageRow[]>(
        `SELECT seq, at, actor, action, target, changes FROM audit_log
          WHERE at >= $1::timestamptz AND at < $2::timestamptz AND ($4::timestamptz IS NULL OR (at, seq) < ($4::timestamptz, $5::bigint))
          ORDER BY at DESC, seq DESC LIMIT $3`,
        [from, to, limit + 1, before?.at ?? null, before?.seq ?? null],
      ),
    );
    const shown = rows.slice(0, limit);
    const last = shown[shown.length - 1];
    return { entries: shown.map(toAuditEntry), next: rows.length > limit && last ? { at: last.at.toISOString(), seq: Number(last.seq) } : null };
  }

  /**
   * Commits the charges still queued and waits for every charge's outcome (see
   * AsyncGroupCommit.drain), then closes the connections at once. The caller has waited
   * for what it needs of the store (a server, for the requests in flight), so a query
   * still running is one nobody waits for: a poll, a lease, a charge's transaction given
   * up after its time. Waiting for those would wait for nothing, and for as long as a
   * database gone silent keeps them; closed, they reject, and a transaction cut short
   * changes nothing. Closing twice is harmless.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    await this.charges.drain();
    this.closed = true;
    await Promise.all([this.sql.close({ timeout: 0 }), this.quickSql.close({ timeout: 0 })]);
  }
}

/** A charge group's time ran out before a statement was sent: see PostgresStore.applyGroup. */
class ChargeDeadline extends Error {
  override readonly name = "ChargeDeadline";
}

/** An error of open(), with the database named without its password. */
function openError(error: unknown, label: string, database: string): Error {
  if (error instanceof StoreError || error instanceof OlderSchemaError) return error;
  const message = redactUrl((error as Error)?.message ?? String(error));
  const sqlstate = sqlstateOf(error);
  // 3D000: invalid_catalog_name, the database does not exist. Not StateNotFoundError,
  // whose hint (a command that makes a new state) would not help: iplookup creates its
  // tables, never the database.
  if (sqlstate === "3D000") return new Error(`${label}: there is no database "${database}" on that server; create it first (createdb, or CREATE DATABASE)`, { cause: error });
  // Class 28: the server refused the login. Unavailable once serving (a password changed
  // under a running server), but at open the URL is what to check.
  if (sqlstate?.startsWith("28")) {
    return new StoreUnavailableError(`the state database at ${label} refused the login: ${message}; check the user and password in the URL (or PGPASSWORD)`, { cause: error });
  }
  // 42501: the role may not use the database or its schema (CONNECT, CREATE on the schema).
  if (sqlstate === "42501") return new Error(`the state database at ${label} refused iplookup's role: ${message}; grant it the privilege, or make it the database's owner`, { cause: error });
  if (isUnavailable(error)) return new StoreUnavailableError(`cannot reach the state database at ${label}: ${message}`, { cause: error });
  return new Error(`the state database at ${label}: ${message}`, { cause: error });
}

function chunks<T>(rows: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < rows.length; i += IMPORT_CHUNK) out.push(rows.slice(i, i + IMPORT_CHUNK));
  return out;
}

function toKey(row: KeyRow): ApiKey {
  return { id: row.id, name: row.name, plan: row.plan, createdAt: row.created_at.toISOString(), revokedAt: row.revoked_at?.toISOString() ?? null, ...controlFields(row) };
}

function toAdminToken(row: AdminTokenRow): AdminToken {
  const token = { id: row.id, name: row.name, createdAt: row.created_at.toISOString(), revokedAt: row.revoked_at?.toISOString() ?? null };
  return row.read_only ? { ...token, readOnly: true } : token;
}

/** The key as its previous secret finds it: working until the rotation's grace ends. */
function previousSecret(active: ActiveKey): ActiveKey {
  return { ...active, secretValidUntil: Date.parse(active.key.graceUntil ?? "1970-01-01T00:00:00Z") };
}

interface AuditRow {
  at: Date;
  actor: string;
  action: string;
  target: string;
  changes: string;
}

interface AuditPageRow extends AuditRow {
  /** A bigint column: the driver answers a string. */
  seq: string | number;
}

function toAuditEntry(row: AuditRow): AuditEntry {
  return { at: row.at.toISOString(), actor: row.actor, action: row.action, target: row.target, changes: JSON.parse(row.changes) as Record<string, unknown> };
}

function toActiveKey(row: ActiveKeyRow): ActiveKey {
  return { key: toKey(row), plan: toPlan({ ...row, name: row.plan }) };
}

function toPlan(row: PlanRow): Plan {
  return {
    name: row.name,
    maxBatchSize: row.max_batch_size,
    monthlyUnits: row.monthly_units === null ? null : Number(row.monthly_units),
    rateLimit: row.rate_limit,
  };
}
