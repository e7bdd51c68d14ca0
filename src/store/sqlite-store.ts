import { Database, type Statement } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { chargeError, keyNameError } from "./charge-rules.ts";
import { GroupCommit } from "./group-commit.ts";
import { isMissing } from "../errors/file-access.ts";
import { busyError, isBusy, isUnwritable, stateFileError, unwritableError, WriteFaults, type WriteFault } from "./sqlite-faults.ts";
import { applyPlanChanges, samePlan } from "./plan-rules.ts";
import { migrate, SCHEMA_VERSION, schemaVersion } from "./schema.ts";
import { openReadOnly, type ReadOnlyFile } from "./sqlite-read-only.ts";
import { hashSecret, newKeyId, newSecret } from "./secret.ts";
import { newAdminSecret, newAdminTokenId } from "./admin-token.ts";
import { DayTally } from "./usage-days.ts";
import { checkSnapshot } from "./state-snapshot.ts";
import * as corrections from "./sqlite-corrections.ts";
import type { Correction, CorrectionFields, CorrectionSnapshot } from "../corrections/correction.ts";
import { applyControlChanges, controlColumnList, controlFields, controlValues, sameControlValues, type ControlColumns } from "./key-control-columns.ts";
import { SqliteWebhooks, type UsageCrossing } from "./sqlite-webhooks.ts";
import { writeChangeRecord } from "./sqlite-records.ts";
import { toGeneration, type GenerationRow } from "./generation-row.ts";
import { closeKeepingFiles, guardedConnection, StateFileIdentity } from "./state-file-identity.ts";
import { crossesThreshold } from "../events/usage-thresholds.ts";
import { scrubEntry } from "../audit/audit-log.ts";
import {
  StateNotFoundError,
  StoreError,
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
  type ChangeRecord,
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
  type UsageRecord,
} from "./store.ts";

interface KeyRow extends ControlColumns {
  id: string;
  name: string;
  plan: string;
  created_at: string;
  revoked_at: string | null;
}

interface PlanRow {
  name: string;
  max_batch_size: number;
  monthly_units: number | null;
  rate_limit: number | null;
}

type ActiveKeyRow = KeyRow & Omit<PlanRow, "name"> & { secret_hash: string; previous_secret_hash: string | null };

interface AdminTokenRow {
  id: string;
  name: string;
  created_at: string;
  revoked_at: string | null;
  read_only: number;
}

/** Options of SqliteStore.open. */
export interface SqliteStoreOptions {
  /** The time stamped on keys (created, revoked, rotated); the system clock by default. */
  readonly clock?: () => Date;
  /** How long to wait for another connection's write lock before SQLITE_BUSY. */
  readonly busyTimeoutMs?: number;
  /**
   * For a server: charges never wait for another process's write lock on the thread;
   * a group that finds the lock taken is tried again asynchronously, and a charge still
   * waiting after this many milliseconds fails with StoreUnavailableError (nothing
   * charged). Without it, a charge waits synchronously up to `busyTimeoutMs`.
   */
  readonly lockWaitMs?: number;
  /**
   * Whether a missing file is created (the default). With false, a missing file is
   * refused with StateNotFoundError and nothing is created, neither file nor directory.
   */
  readonly create?: boolean;
  /**
   * Whether this connection checkpoints the WAL itself when a commit takes it past 1,000
   * pages (SQLite's default, true). A server opens its connections with false and runs
   * the checkpoints on a thread of their own (see wal-checkpoints.ts).
   */
  readonly walAutoCheckpoint?: boolean;
  /**
   * Whether the file must be writable (a server's, whose every charge writes): opening
   * then writes nothing but takes the write lock and starts a write, so a file the
   * system lets this process read but not write (a read-only file, a read-only folder
   * for the -wal and -shm files, a read-only file system) is refused with
   * StateFileError at once, rather than fail every charge later. SQLite opens such a
   * file read-only without a word.
   */
  readonly requireWritable?: boolean;
  /**
   * Told when charges start failing because the file cannot be written (a full disk, a
   * file made read-only, an I/O error), again at most once a minute while they keep
   * failing, and once when a charge is written again: for one log line now and then,
   * not one a request. The charges themselves fail with StoreUnavailableError.
   */
  readonly onWriteFault?: (fault: WriteFault) => void;
  /**
   * For a command that only reads: nothing on disk changes, and a file this process may
   * only read is read. The file is opened read-only (see openReadOnly), never switched to
   * WAL nor migrated; one of an older schema is read from a migrated copy (see migratedCopy), so
   * that an older iplookup can still open it (a backup kept to go back to, say). A
   * missing file is refused with StateNotFoundError (`create` is not read). Every write
   * asked of the store fails.
   */
  readonly readOnly?: boolean;
}

const KEY_COLUMNS = `id, name, plan, created_at, revoked_at, ${controlColumnList()}`;
const PLAN_COLUMNS = "name, max_batch_size, monthly_units, rate_limit";
const ADMIN_TOKEN_COLUMNS = "id, name, created_at, revoked_at, read_only";
/** Active keys with their plans; a WHERE clause follows. */
const ACTIVE_KEYS = `SELECT k.id, k.name, k.plan, k.created_at, k.revoked_at, ${controlColumnList("k.")}, k.secret_hash, k.previous_secret_hash,
    p.max_batch_size, p.monthly_units, p.rate_limit
  FROM keys k JOIN plans p ON p.name = k.plan`;
/**
 * How long a statement waits by default for another connection's write lock before it
 * fails with SQLITE_BUSY. Writers hold the lock for well under a millisecond (no fsync
 * per commit), so only a stuck process makes anyone wait this long.
 */
const BUSY_TIMEOUT_MS = 5000;
/**
 * How often a store in use looks again whether its state file is still the one it
 * opened (see StateFileIdentity): as often as a server polls the change counter.
 */
const FILE_CHECK_MS = 250;

/**
 * The Store on a SQLite file, which several processes may share (the workers of
 * `serve --workers N`, and the CLI while a server runs).
 *
 * Durability: the file is in WAL mode with `synchronous=NORMAL`. COMMIT returns only
 * after the transaction's pages are written to the -wal file with write(2), so they are
 * in the kernel's page cache: a process killed at any moment (kill -9) loses no
 * committed transaction, and the next opener replays the WAL. NORMAL skips only the
 * fsync at each commit (the WAL is synced at checkpoints), so a power cut or kernel
 * crash could roll back the last commits, but never corrupts the file.
 *
 * Charges are grouped (see GroupCommit): one `BEGIN IMMEDIATE … COMMIT` for every
 * charge queued in the same event-loop turn. IMMEDIATE takes the write lock at BEGIN, so
 * each charge's check and update see no other writer, in this process or another one,
 * and a quota is never overspent.
 */
export class SqliteStore implements Store {
  private closed = false;
  /**
   * The connection (`db` is the same, refusing any use once the files changed); the
   * charges' statements are prepared on it, and only check `files.changed`, which the
   * change counter's poll (generation()) updates: a charge costs no look at the files.
   */
  private readonly connection: Database;
  private readonly db: Database;
  private readonly charges: GroupCommit<Charge, ChargeOutcome>;
  /** Webhooks and the event outbox (see sqlite-webhooks.ts). */
  readonly webhooks: SqliteWebhooks;
  private readonly statements: {
    used: Statement<{ used: number }, [string, string]>;
    keyUsed: Statement<{ used: number | null }, [string, string]>;
    addUsage: Statement<unknown, [string, string, number]>;
    addDay: Statement<unknown, [string, string, number, number, string]>;
    generation: Statement<GenerationRow, []>;
    key: Statement<KeyRow, [string]>;
    plan: Statement<PlanRow, [string]>;
    activeKey: Statement<ActiveKeyRow, [string]>;
  };

  private constructor(
    db: Database,
    private readonly clock: () => Date,
    path: string,
    lockWaitMs?: number,
    onWriteFault?: (fault: WriteFault) => void,
    /** The files opened; null for `:memory:`. */
    private readonly files: StateFileIdentity | null = null,
    /** Run once the connection is closed; what it throws, close() throws. */
    private readonly afterClose: () => void = () => {},
  ) {
    this.connection = db;
    this.db = files ? guardedConnection(db, files, FILE_CHECK_MS) : db;
    this.webhooks = new SqliteWebhooks(this.db, clock);
    this.statements = {
      used: db.query("SELECT used FROM usage WHERE key_id = ?1 AND period = ?2"),
      // No row: the key is gone. A null `used`: the key has no units in the period yet.
      keyUsed: db.query("SELECT (SELECT used FROM usage WHERE key_id = ?1 AND period = ?2) AS used FROM keys WHERE id = ?1"),
      addUsage: db.query(
        "INSERT INTO usage (key_id, period, used) VALUES (?1, ?2, ?3) ON CONFLICT (key_id, period) DO UPDATE SET used = used + excluded.used",
      ),
      addDay: db.query(
        `INSERT INTO usage_days (key_id, day, requests, units, last_used_at) VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (key_id, day) DO UPDATE SET requests = requests + excluded.requests, units = units + excluded.units,
           last_used_at = max(last_used_at, excluded.last_used_at)`,
      ),
      generation: db.query("SELECT value, store_id FROM generation WHERE id = 1"),
      key: db.query(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = ?1`),
      plan: db.query(`SELECT ${PLAN_COLUMNS} FROM plans WHERE name = ?1`),
      activeKey: db.query(`${ACTIVE_KEYS} WHERE (k.secret_hash = ?1 OR k.previous_secret_hash = ?1) AND k.revoked_at IS NULL`),
    };
    // Wrapped once: bun:sqlite builds a new wrapper, with its variants, on every call of transaction().
    const applyInTransaction = db.transaction((group: readonly Charge[]) => this.applyGroup(group));
    const faults = new WriteFaults(onWriteFault);
    this.charges = new GroupCommit(
      (group) => {
        let outcomes: ChargeOutcome[];
        // Nothing charged into a file nobody will read.
        if (this.files?.changed) throw this.files.changed;
        try {
          outcomes = applyInTransaction.immediate(group);
        } catch (error) {
          // Rolled back: nothing of the group was charged.
          if (!isUnwritable(error)) throw error;
          const unavailable = unwritableError(path, error);
          faults.failed(unavailable, group.length);
          throw unavailable;
        }
        faults.passed();
        return outcomes;
      },
      undefined,
      lockWaitMs === undefined
        ? undefined
        : {
            isPassing: (error) => (error as { code?: unknown })?.code === "SQLITE_BUSY",
            giveUpAfterMs: lockWaitMs,
            giveUp: (error) => new StoreUnavailableError(`the state file is locked by another process (waited ${lockWaitMs} ms)`, { cause: error }),
          },
    );
  }

  /**
   * Opens a state file, creating it (and its parent directory) if missing: the
   * directory with mode 0700, the file with mode 0600, since it holds key hashes and
   * usage. `:memory:` opens a store that lives and dies with the process.
   * Throws StoreError when the file is not an iplookup state file, StateNotFoundError
   * when it is missing and `options.create` is false. With `options.readOnly`, nothing
   * is created, switched or migrated (see SqliteStoreOptions.readOnly).
   */
  static open(path: string, options: SqliteStoreOptions = {}): SqliteStore {
    const busyTimeoutMs = options.busyTimeoutMs ?? BUSY_TIMEOUT_MS;
    if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) throw new RangeError(`busyTimeoutMs must be a whole number of milliseconds (got ${busyTimeoutMs})`);
    if (options.readOnly && path !== ":memory:" && path !== "") return SqliteStore.openForReading(path, busyTimeoutMs, options.clock ?? (() => new Date()));
    const create = options.create ?? true;
    const created = path !== ":memory:" && create ? createPrivateFile(path) : { directory: null, file: false };
    let db: Database;
    try {
      db = new Database(path, { readwrite: true, create });
    } catch (error) {
      removeCreated(path, created);
      if (!create && isMissing(path)) throw new StateNotFoundError(`there is no state file at ${path}`);
      throw isUnwritable(error) ? stateFileError(path, error, "open") : error;
    }
    let stage: "open" | "write" = "open";
    try {
      // busy_timeout first: switching a new file to WAL needs a lock that another
      // process opening the same file may hold for a moment.
      db.run(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
      // Before anything writes: a file that is not ours is refused untouched.
      schemaVersion(db, path);
      stage = "write";
      whileBusy(busyTimeoutMs, () => db.run("PRAGMA journal_mode = WAL"));
      db.run("PRAGMA synchronous = NORMAL");
      db.run("PRAGMA foreign_keys = ON");
      if (options.walAutoCheckpoint === false) db.run("PRAGMA wal_autocheckpoint = 0");
      whileBusy(busyTimeoutMs, () => migrate(db, path));
      if (options.requireWritable) tryWriting(db, busyTimeoutMs);
      // Opened and migrated: from now on a write that finds the lock taken fails at once
      // and the group commit tries it again later (see lockWaitMs).
      if (options.lockWaitMs !== undefined) db.run("PRAGMA busy_timeout = 0");
    } catch (error) {
      db.close();
      // Busy: another process has the file open (it may have written to it already), so
      // even a file this process created stays.
      if (isBusy(error)) {
        removeCreated(path, { ...created, file: false });
        throw busyError(path, error);
      }
      removeCreated(path, created);
      throw openFailure(path, error, stage);
    }
    const files = path === ":memory:" || path === "" ? null : StateFileIdentity.of(path);
    return new SqliteStore(db, options.clock ?? (() => new Date()), path, options.lockWaitMs, options.onWriteFault, files);
  }

  /** SqliteStore.open with `readOnly` (see SqliteStoreOptions.readOnly). */
  private static openForReading(path: string, busyTimeoutMs: number, clock: () => Date): SqliteStore {
    let file: ReadOnlyFile;
    try {
      file = openReadOnly(path);
    } catch (error) {
      if (isMissing(path)) throw new StateNotFoundError(`there is no state file at ${path}`);
      throw openFailure(path, error);
    }
    const { db } = file;
    let copy: MigratedCopy | null = null;
    try {
      db.run(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
      if (schemaVersion(db, path) < SCHEMA_VERSION) {
        copy = migratedCopy(db, path);
        file.checkUnchanged();
      }
    } catch (error) {
      copy?.remove();
      db.close();
      throw openFailure(path, error);
    }
    // No StateFileIdentity: it keeps a connection from writing into, or checkpointing
    // over, files that another took the place of, and this one does neither.
    if (copy === null) return new SqliteStore(db, clock, path, undefined, undefined, null, () => file.checkUnchanged());
    db.close();
    return new SqliteStore(copy.db, clock, path, undefined, undefined, null, copy.remove);
  }

  private now(): string {
    return this.clock().toISOString();
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
    this.db
      .transaction(() => {
        if (!this.statements.plan.get(plan)) throw new StoreError(`there is no plan "${plan}"`);
        this.db
          .query(
            `INSERT INTO keys (id, name, plan, secret_hash, created_at, expires_at, allowed_cidrs, allowed_origins, metadata)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)`,
          )
          .run(key.id, key.name, key.plan, hashSecret(secret), key.createdAt, values.expiresAt, values.allowedCidrs, values.allowedOrigins, values.metadata);
        this.keep(audit?.(issued, null));
      })
      .immediate();
    return issued;
  }

  /** Every key, revoked ones included, oldest first. */
  async listKeys(): Promise<ApiKey[]> {
    return this.db.query<KeyRow, []>(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, rowid`).all().map(toKey);
  }

  async getKey(id: string): Promise<ApiKey | null> {
    const row = this.statements.key.get(id);
    return row ? toKey(row) : null;
  }

  async revokeKey(id: string, audit?: Audit<ApiKey, ApiKey>): Promise<ApiKey | null> {
    return this.revokeRow("keys", KEY_COLUMNS, toKey, id, audit);
  }

  /**
   * Revokes the row `id` of `table` (a key, an admin token) in an IMMEDIATE transaction
   * with its audit entry (written from the row as read under the lock); one revoked
   * already is left as it was. Null when there is no such row.
   */
  private revokeRow<Row extends { revoked_at: string | null }, T extends { readonly revokedAt: string | null }>(
    table: "keys" | "admin_tokens",
    columns: string,
    view: (row: Row) => T,
    id: string,
    audit?: Audit<T, T>,
  ): T | null {
    return this.db
      .transaction(() => {
        const row = this.db.query<Row, [string]>(`SELECT ${columns} FROM ${table} WHERE id = ?1`).get(id);
        if (!row) return null;
        const before = view(row);
        const after = row.revoked_at === null ? view({ ...row, revoked_at: this.now() }) : before;
        if (after !== before) this.db.query(`UPDATE ${table} SET revoked_at = ?2 WHERE id = ?1`).run(id, after.revokedAt);
        this.keep(audit?.(after, before));
        return after;
      })
      .immediate();
  }

  async rotateKey(id: string, options: RotateOptions = {}, audit?: Audit<IssuedKey, ApiKey>): Promise<IssuedKey | null> {
    const secret = newSecret();
    const now = this.clock();
    const graceUntil = options.graceMs ? new Date(now.getTime() + options.graceMs).toISOString() : null;
    return this.db
      .transaction(() => {
        const before = this.statements.key.get(id);
        if (!before || before.revoked_at !== null) return null;
        // With a grace, the secret being replaced becomes the previous one (and the one an
        // earlier grace kept stops); without, both stop at once.
        const row = this.db
          .query<KeyRow, [string, string, string, string | null]>(
            `UPDATE keys SET previous_secret_hash = CASE WHEN ?4 IS NULL THEN NULL ELSE secret_hash END, grace_until = ?4, secret_hash = ?2, rotated_at = ?3
             WHERE id = ?1 RETURNING ${KEY_COLUMNS}`,
          )
          .get(id, hashSecret(secret), now.toISOString(), graceUntil)!;
        const issued = { key: toKey(row), secret };
        this.keep(audit?.(issued, toKey(before)));
        return issued;
      })
      .immediate();
  }

  async setKeyPlan(id: string, plan: string, audit?: Audit<ApiKey, ApiKey>): Promise<ApiKey | null> {
    // IMMEDIATE: the key's state and the plan's existence are read under the write lock,
    // so neither can change between the checks and the update.
    return this.db
      .transaction(() => {
        const row = this.statements.key.get(id);
        if (!row) return null;
        if (row.revoked_at !== null) throw new StoreError(`key ${id} was revoked on ${row.revoked_at}; a revoked key keeps its plan`);
        if (!this.statements.plan.get(plan)) throw new StoreError(`there is no plan "${plan}"`);
        // Only a real change writes: an UPDATE of the same value would still move the
        // change counter and make every server reload its keys for nothing.
        const before = toKey(row);
        const after = row.plan === plan ? before : toKey({ ...row, plan });
        if (after !== before) this.db.query("UPDATE keys SET plan = ?2 WHERE id = ?1").run(id, plan);
        this.keep(audit?.(after, before));
        return after;
      })
      .immediate();
  }

  /** Every plan, by name. */
  async listPlans(): Promise<Plan[]> {
    return this.db.query<PlanRow, []>(`SELECT ${PLAN_COLUMNS} FROM plans ORDER BY name`).all().map(toPlan);
  }

  async getPlan(name: string): Promise<Plan | null> {
    const row = this.statements.plan.get(name);
    return row ? toPlan(row) : null;
  }

  async setPlan(name: string, changes: PlanChanges, audit?: Audit<Plan, Plan | null>): Promise<Plan> {
    return this.db
      .transaction(() => {
        const existing = this.statements.plan.get(name);
        const before = existing ? toPlan(existing) : null;
        const plan = applyPlanChanges(name, before, changes);
        // Only a real change writes (and moves the change counter, which makes every
        // server reload its keys).
        if (!samePlan(before, plan)) {
          this.db
            .query(
              `INSERT INTO plans (${PLAN_COLUMNS}) VALUES (?1, ?2, ?3, ?4)
               ON CONFLICT (name) DO UPDATE SET max_batch_size = ?2, monthly_units = ?3, rate_limit = ?4`,
            )
            .run(plan.name, plan.maxBatchSize, plan.monthlyUnits, plan.rateLimit);
        }
        this.keep(audit?.(plan, before));
        return plan;
      })
      .immediate();
  }

  /** Also where a server's poll finds the files changed (StateFileChangedError from then on). */
  async generation(): Promise<Generation> {
    const changed = this.files?.check();
    if (changed) throw changed;
    return toGeneration(this.statements.generation.get()!);
  }

  async authSnapshot(): Promise<AuthSnapshot> {
    // One read transaction: the generation and the keys come from the same snapshot.
    return this.db
      .transaction(() => {
        const generation = toGeneration(this.statements.generation.get()!);
        const rows = this.db.query<ActiveKeyRow, []>(`${ACTIVE_KEYS} WHERE k.revoked_at IS NULL`).all();
        const keysByHash = new Map<string, ActiveKey>();
        for (const row of rows) {
          const active = toActiveKey(row);
          keysByHash.set(row.secret_hash, active);
          if (row.previous_secret_hash !== null) keysByHash.set(row.previous_secret_hash, previousSecret(active));
        }
        return { generation, keysByHash };
      })
      .deferred();
  }

  async findActiveKey(secretHash: string): Promise<ActiveKey | null> {
    if (this.files?.changed) throw this.files.changed;
    const row = this.statements.activeKey.get(secretHash);
    if (!row) return null;
    return row.secret_hash === secretHash ? toActiveKey(row) : previousSecret(toActiveKey(row));
  }

  charge(charge: Charge): Promise<ChargeOutcome> {
    if (this.closed) return Promise.reject(new StoreError("the store is closed"));
    const refused = chargeError(charge);
    if (refused) return Promise.reject(refused);
    return this.charges.submit(charge);
  }

  /**
   * A group's charges, inside its IMMEDIATE transaction, which holds the write lock, so
   * no other writer can come between the reads and the writes. Each key and month is
   * read once; its charges are then decided in memory in the order they came, and what
   * they add is written back as one sum. A group of N charges to one key costs one
   * SELECT and one UPSERT instead of N of each (a charge ~0.1 µs against ~1.4 µs). The
   * granted charges are added up per key and UTC day the same way, and written in the
   * same transaction (usage_days), so the days always sum to the units charged. The
   * key's row is read with its units: a key deleted behind the servers' backs (which a
   * key cache may hold for another poll) is found gone, under the lock, and its charges
   * charge nothing, rather than fail the whole group on the foreign key.
   */
  private applyGroup(group: readonly Charge[]): ChargeOutcome[] {
    const usage = new Map<string, { keyId: string; period: string; known: boolean; used: number; added: number }>();
    const days = new DayTally();
    // The charges that moved a key's units across a usage.threshold line (rare).
    const crossings: UsageCrossing[] = [];
    let nowMs: number | undefined;
    const outcomes = group.map(({ keyId, period, units, limit, at, signal }): ChargeOutcome => {
      // Unambiguous: a period is YYYY-MM (checked in charge()), so it holds no space.
      const id = `${keyId} ${period}`;
      let row = usage.get(id);
      if (!row) {
        const found = this.statements.keyUsed.get(keyId, period);
        usage.set(id, (row = { keyId, period, known: found !== null, used: found?.used ?? 0, added: 0 }));
      }
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
    for (const row of usage.values()) if (row.added > 0) this.statements.addUsage.run(row.keyId, row.period, row.added);
    for (const row of days.list()) this.statements.addDay.run(row.keyId, row.day, row.requests, row.units, row.lastUsedAt);
    // usage.threshold events, in this same transaction: see usage-thresholds.ts.
    this.webhooks.recordCrossings(crossings, () => (nowMs ??= this.clock().getTime()));
    return outcomes;
  }

  async unitsUsed(keyId: string, period: string): Promise<number> {
    if (this.files?.changed) throw this.files.changed;
    return this.statements.used.get(keyId, period)?.used ?? 0;
  }

  async usageByDay(from: string, to: string, keyId?: string): Promise<DayUsage[]> {
    const where = keyId === undefined ? "" : " AND key_id = ?3";
    return this.db
      .query<DayUsage, string[]>(`SELECT day, sum(requests) AS requests, sum(units) AS units FROM usage_days WHERE day BETWEEN ?1 AND ?2${where} GROUP BY day ORDER BY day`)
      .all(...(keyId === undefined ? [from, to] : [from, to, keyId]));
  }

  async usageByKey(from: string, to: string): Promise<KeyUsage[]> {
    return this.db
      .query<{ key_id: string; name: string; requests: number; units: number }, [string, string]>(
        `SELECT d.key_id, k.name, sum(d.requests) AS requests, sum(d.units) AS units
         FROM usage_days d JOIN keys k ON k.id = d.key_id WHERE d.day BETWEEN ?1 AND ?2
         GROUP BY d.key_id ORDER BY units DESC, d.key_id`,
      )
      .all(from, to)
      .map((row) => ({ keyId: row.key_id, name: row.name, requests: row.requests, units: row.units }));
  }

  async keyActivity(period: string): Promise<KeyActivity[]> {
    return this.db
      .query<{ key_id: string; units: number | null; last_used_at: string | null }, [string]>(
        `SELECT k.id AS key_id, u.used AS units, (SELECT max(d.last_used_at) FROM usage_days d WHERE d.key_id = k.id) AS last_used_at
         FROM keys k LEFT JOIN usage u ON u.key_id = k.id AND u.period = ?1 ORDER BY k.created_at, k.rowid`,
      )
      .all(period)
      .map((row) => ({ keyId: row.key_id, units: row.units ?? 0, lastUsedAt: row.last_used_at }));
  }

  async createAdminToken(name: string, audit?: Audit<IssuedAdminToken>): Promise<IssuedAdminToken> {
    return this.insertAdminToken(name, false, audit);
  }

  private insertAdminToken(name: string, readOnly: boolean, audit: Audit<IssuedAdminToken> | undefined): IssuedAdminToken {
    const trimmed = name.trim();
    const refused = keyNameError(trimmed);
    if (refused) throw new StoreError(refused.replace("a key name", "an admin token's name"));
    const secret = newAdminSecret();
    const token: AdminToken = { id: newAdminTokenId(), name: trimmed, createdAt: this.now(), revokedAt: null, ...(readOnly ? { readOnly: true as const } : {}) };
    const issued = { token, secret };
    this.db
      .transaction(() => {
        this.db
          .query("INSERT INTO admin_tokens (id, name, secret_hash, created_at, read_only) VALUES (?1, ?2, ?3, ?4, ?5)")
          .run(token.id, token.name, hashSecret(secret), token.createdAt, readOnly ? 1 : 0);
        this.keep(audit?.(issued, null));
      })
      .immediate();
    return issued;
  }

  async listAdminTokens(): Promise<AdminToken[]> {
    return this.db.query<AdminTokenRow, []>(`SELECT ${ADMIN_TOKEN_COLUMNS} FROM admin_tokens ORDER BY created_at, rowid`).all().map(toAdminToken);
  }

  async getAdminToken(id: string): Promise<AdminToken | null> {
    const row = this.db.query<AdminTokenRow, [string]>(`SELECT ${ADMIN_TOKEN_COLUMNS} FROM admin_tokens WHERE id = ?1`).get(id);
    return row ? toAdminToken(row) : null;
  }

  async revokeAdminToken(id: string, audit?: Audit<AdminToken, AdminToken>): Promise<AdminToken | null> {
    return this.revokeRow("admin_tokens", ADMIN_TOKEN_COLUMNS, toAdminToken, id, audit);
  }

  async findAdminToken(secretHash: string): Promise<AdminToken | null> {
    const row = this.db.query<AdminTokenRow, [string]>(`SELECT ${ADMIN_TOKEN_COLUMNS} FROM admin_tokens WHERE secret_hash = ?1 AND revoked_at IS NULL`).get(secretHash);
    return row ? toAdminToken(row) : null;
  }

  async exportState(): Promise<StateSnapshot> {
    // One read transaction: the three lists come from the same snapshot.
    return this.db
      .transaction(() => {
        const plans = this.db.query<PlanRow, []>(`SELECT ${PLAN_COLUMNS} FROM plans ORDER BY name`).all().map(toPlan);
        const keys = this.db
          .query<KeyRow & { secret_hash: string; rotated_at: string | null; previous_secret_hash: string | null }, []>(
            `SELECT ${KEY_COLUMNS}, secret_hash, rotated_at, previous_secret_hash FROM keys ORDER BY created_at, rowid`,
          )
          .all()
          .map((row): KeyRecord => ({
            ...toKey(row),
            secretHash: row.secret_hash,
            rotatedAt: row.rotated_at,
            ...(row.previous_secret_hash !== null ? { previousSecretHash: row.previous_secret_hash } : {}),
          }));
        const usage = this.db
          .query<{ key_id: string; period: string; used: number }, []>(
            "SELECT u.key_id, u.period, u.used FROM usage u JOIN keys k ON k.id = u.key_id WHERE u.used > 0 ORDER BY k.created_at, k.rowid, u.period",
          )
          .all()
          .map((row): UsageRecord => ({ keyId: row.key_id, period: row.period, used: row.used }));
        const days = this.db
          .query<{ key_id: string; day: string; requests: number; units: number; last_used_at: string }, []>(
            "SELECT d.key_id, d.day, d.requests, d.units, d.last_used_at FROM usage_days d JOIN keys k ON k.id = d.key_id ORDER BY k.created_at, k.rowid, d.day",
          )
          .all()
          .map((row): DayUsageRecord => ({ keyId: row.key_id, day: row.day, requests: row.requests, units: row.units, lastUsedAt: row.last_used_at }));
        const adminTokens = this.db
          .query<AdminTokenRow & { secret_hash: string }, []>(`SELECT ${ADMIN_TOKEN_COLUMNS}, secret_hash FROM admin_tokens ORDER BY created_at, rowid`)
          .all()
          .map((row): AdminTokenRecord => ({ ...toAdminToken(row), secretHash: row.secret_hash }));
        const audit = this.db
          .query<AuditRow, []>("SELECT at, actor, action, target, changes FROM audit_log ORDER BY at, seq")
          .all()
          .map(toAuditEntry);
        return { plans, keys, usage, days, adminTokens, corrections: corrections.listCorrections(this.db), audit, webhooks: this.webhooks.exportRows(), onceEvents: this.webhooks.exportOnceEvents() };
      })
      .deferred();
  }

  async importState(snapshot: StateSnapshot, options: ImportOptions = {}): Promise<void> {
    checkSnapshot(snapshot);
    // IMMEDIATE: the write lock is held from the check to the commit, so no key appears between.
    this.db
      .transaction(() => {
        const held = this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM keys").get()!.n;
        if (held > 0 && !options.replace) {
          throw new StoreError(`the state file holds ${held} key${held === 1 ? "" : "s"} already; copy into an empty store, or replace what it holds`);
        }
        const heldCorrections = this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM corrections").get()!.n;
        if (heldCorrections > 0 && !options.replace) {
          throw new StoreError(`the state file holds ${heldCorrections} correction${heldCorrections === 1 ? "" : "s"} already; copy into an empty store, or replace what it holds`);
        }
        // The webhook tables first: see SqliteWebhooks.importRows.
        this.webhooks.importRows(snapshot.webhooks ?? [], options.replace === true, snapshot.onceEvents ?? []);
        if (options.replace) for (const table of ["usage_days", "usage", "keys", "plans", "admin_tokens", "corrections", "audit_log"]) this.db.run(`DELETE FROM ${table}`);
        const plan = this.db.query(
          `INSERT INTO plans (${PLAN_COLUMNS}) VALUES (?1, ?2, ?3, ?4)
           ON CONFLICT (name) DO UPDATE SET max_batch_size = ?2, monthly_units = ?3, rate_limit = ?4`,
        );
        for (const p of snapshot.plans) plan.run(p.name, p.maxBatchSize, p.monthlyUnits, p.rateLimit);
        const key = this.db.query(
          `INSERT INTO keys (id, name, plan, secret_hash, created_at, revoked_at, rotated_at, expires_at, allowed_cidrs, allowed_origins, metadata, previous_secret_hash, grace_until)
           VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)`,
        );
        for (const k of snapshot.keys) {
          const values = controlValues(k.controls);
          key.run(k.id, k.name, k.plan, k.secretHash, k.createdAt, k.revokedAt, k.rotatedAt, values.expiresAt, values.allowedCidrs, values.allowedOrigins, values.metadata,
            k.previousSecretHash ?? null, k.previousSecretHash ? (k.graceUntil ?? null) : null);
        }
        const usage = this.db.query("INSERT INTO usage (key_id, period, used) VALUES (?1, ?2, ?3)");
        for (const u of snapshot.usage) usage.run(u.keyId, u.period, u.used);
        const day = this.db.query("INSERT INTO usage_days (key_id, day, requests, units, last_used_at) VALUES (?1, ?2, ?3, ?4, ?5)");
        for (const d of snapshot.days ?? []) day.run(d.keyId, d.day, d.requests, d.units, d.lastUsedAt);
        const token = this.db.query("INSERT INTO admin_tokens (id, name, secret_hash, created_at, revoked_at, read_only) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
        for (const t of snapshot.adminTokens ?? []) token.run(t.id, t.name, t.secretHash, t.createdAt, t.revokedAt, t.readOnly ? 1 : 0);
        corrections.insertCorrections(this.db, snapshot.corrections ?? []);
        const entry = this.db.query("INSERT INTO audit_log (at, actor, action, target, changes) VALUES (?1, ?2, ?3, ?4, ?5)");
        // Scrubbed on the way in: an entry from before the log scrubbed all of it may hold a secret.
        for (const a of (snapshot.audit ?? []).map(scrubEntry)) entry.run(a.at, a.actor, a.action, a.target, JSON.stringify(a.changes));
        writeChangeRecord(this.db, options.audit?.(snapshot, null) ?? null);
      })
      .immediate();
  }

  async listCorrections(): Promise<Correction[]> {
    return corrections.listCorrections(this.db);
  }

  async correctionSnapshot(): Promise<CorrectionSnapshot> {
    return corrections.correctionSnapshot(this.db);
  }

  async putCorrection(cidr: string, fields: CorrectionFields, note: string | null, audit?: Audit<Correction, Correction | null>): Promise<Correction> {
    return corrections.putCorrection(this.db, cidr, fields, note, this.now(), (after, before) => this.keep(audit?.(after, before)));
  }

  async removeCorrection(cidr: string, audit?: Audit<Correction>): Promise<Correction | null> {
    return corrections.removeCorrection(this.db, cidr, (removed) => this.keep(audit?.(removed, null)));
  }

  // Key controls, read-only admin tokens and the audit log (CONTRACT §16).

  async updateKey(id: string, changes: KeyChanges, audit?: Audit<ApiKey, ApiKey>): Promise<ApiKey | null> {
    // IMMEDIATE, as setKeyPlan: the key and the plan are read under the write lock.
    return this.db
      .transaction(() => {
        const row = this.statements.key.get(id);
        if (!row) return null;
        if (row.revoked_at !== null) throw new StoreError(`key ${id} was revoked on ${row.revoked_at}; a revoked key cannot be changed`);
        const plan = changes.plan ?? row.plan;
        if (plan !== row.plan && !this.statements.plan.get(plan)) throw new StoreError(`there is no plan "${plan}"`);
        const current = toKey(row);
        const before = controlValues(current.controls);
        const controls = applyControlChanges(current.controls, changes);
        const after = controlValues(controls);
        // Only a real change writes (and moves the change counter).
        if (plan !== row.plan || !sameControlValues(before, after)) {
          this.db
            .query("UPDATE keys SET plan = ?2, expires_at = ?3, allowed_cidrs = ?4, allowed_origins = ?5, metadata = ?6 WHERE id = ?1")
            .run(id, plan, after.expiresAt, after.allowedCidrs, after.allowedOrigins, after.metadata);
        }
        const updated = toKey(this.statements.key.get(id)!);
        this.keep(audit?.(updated, current));
        return updated;
      })
      .immediate();
  }

  async createReadOnlyAdminToken(name: string, audit?: Audit<IssuedAdminToken>): Promise<IssuedAdminToken> {
    return this.insertAdminToken(name, true, audit);
  }

  /** Writes what a change records with itself (see Audit), inside the change's transaction. */
  private keep(record: ChangeRecord | null | undefined): void {
    writeChangeRecord(this.db, record ?? null);
  }

  async listAudit(from: string, to: string, limit: number): Promise<AuditEntry[]> {
    return (await this.pageAudit(from, to, limit, null)).entries;
  }

  async pageAudit(from: string, to: string, limit: number, before: AuditPosition | null): Promise<AuditPage> {
    // One more than asked for: whether older entries follow, without counting them.
    const rows = this.db
      .query<AuditPageRow, [string, string, number, string | null, number | null]>(
        "SELECT seq, at, actor, action, target, changes FROM audit_log WHERE at >= ?1 AND at < ?2 AND (?4 IS NULL OR (at, seq) < (?4, ?5)) ORDER BY at DESC, seq DESC LIMIT ?3",
      )
      .all(from, to, limit + 1, before?.at ?? null, before?.seq ?? null);
    const shown = rows.slice(0, limit);
    const last = shown[shown.length - 1];
    return { entries: shown.map(toAuditEntry), next: rows.length > limit && last ? { at: last.at, seq: last.seq } : null };
  }

  /**
   * Commits the charges still queued, then closes the file. Closing twice is harmless.
   * Files found changed (looked at again first) are closed with closeKeepingFiles, and
   * the charges queued fail.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const changed = this.files?.check();
    this.charges.flush();
    this.closed = true;
    if (changed) closeKeepingFiles(this.connection, this.files!);
    else this.connection.close();
    this.afterClose();
  }
}

/**
 * What opening a state file failed with, as the command line tells it: another
 * process's write lock kept (StateFileBusyError), a file that is not SQLite's
 * (StoreError), one the system refuses or that is damaged (StateFileError), else the
 * error itself.
 */
function openFailure(path: string, error: unknown, stage: "open" | "write" = "open"): unknown {
  if (isBusy(error)) return busyError(path, error);
  if ((error as { code?: unknown }).code === "SQLITE_NOTADB") return new StoreError(`${path} is not an iplookup state file (not a SQLite database)`);
  if (isUnwritable(error)) return stateFileError(path, error, stage);
  return error;
}

/** A state file of an older schema as a reading command reads it (see migratedCopy). */
interface MigratedCopy {
  readonly db: Database;
  /** Closes the copy's connection (if open) and removes the copy. */
  remove(): void;
}

/**
 * A state file of an older schema, for reading: a copy of it (one snapshot, read through
 * `source` with VACUUM INTO, page by page, so memory stays small however large the
 * state), migrated, and refusing writes as the file opened read-only does. The copy is
 * made in a folder of its own in the system's temporary folder, mode 0700 (it holds key
 * hashes), removed with it when the store closes; a process killed meanwhile leaves it
 * there, readable by its user alone.
 */
function migratedCopy(source: Database, path: string): MigratedCopy {
  const folder = mkdtempSync(join(tmpdir(), "iplookup-read-"));
  let db: Database | null = null;
  const remove = () => {
    db?.close();
    rmSync(folder, { recursive: true, force: true });
  };
  try {
    const file = join(folder, "state.db");
    source.run(`VACUUM INTO '${file.replaceAll("'", "''")}'`);
    db = new Database(file);
    migrate(db, path);
    db.run("PRAGMA query_only = ON");
    return { db, remove };
  } catch (error) {
    remove();
    throw error;
  }
}

/** What createPrivateFile made: the topmost directory it created (null: none), and whether the file. */
interface Created {
  readonly directory: string | null;
  readonly file: boolean;
}

/**
 * Creates a missing state file, and its missing directory, readable by the owner only.
 * SQLite gives the -wal and -shm files it creates the mode of the database file. A
 * directory or file that cannot be created fails with StateFileError, naming the path
 * and the system's reason.
 */
function createPrivateFile(path: string): Created {
  const directory = dirname(path);
  let createdDirectory: string | null = null;
  try {
    if (!existsSync(directory)) {
      createdDirectory = mkdirSync(directory, { recursive: true, mode: 0o700 }) ?? null;
      chmodSync(directory, 0o700);
    }
    if (existsSync(path)) return { directory: createdDirectory, file: false };
    closeSync(openSync(path, "a", 0o600));
    chmodSync(path, 0o600);
    return { directory: createdDirectory, file: true };
  } catch (error) {
    removeCreated(path, { directory: createdDirectory, file: false });
    throw stateFileError(path, error, "write");
  }
}

/**
 * Removes what opening made before it failed (a new file and its -wal, -shm and journal;
 * new directories, if still empty), so a failed start leaves nothing half-made behind.
 * A removal that fails is let be: the error that made opening fail is the one to tell.
 */
function removeCreated(path: string, created: Created): void {
  if (created.file) removeStateFiles(path);
  if (created.directory === null) return;
  for (let directory = dirname(path); ; directory = dirname(directory)) {
    try {
      rmdirSync(directory);
    } catch {
      return;
    }
    if (directory === created.directory) return;
  }
}

/**
 * Runs `step` again while it fails with SQLITE_BUSY, for up to `busyTimeoutMs`. Two
 * processes that open one new file at once both hold its read lock when they switch it
 * to WAL (or migrate it); SQLite then fails one at once, without its busy handler, as
 * waiting could not end. Once the other is done, the step passes (or finds it done).
 * The deadline is on a monotonic clock (CONTRACT §12): a wall clock stepped back would
 * keep it waiting, one stepped forward would give up at once.
 */
function whileBusy(busyTimeoutMs: number, step: () => void): void {
  const deadline = performance.now() + busyTimeoutMs;
  for (;;) {
    try {
      step();
      return;
    } catch (error) {
      if (!isBusy(error) || performance.now() >= deadline) throw error;
      Bun.sleepSync(2 + Math.floor(Math.random() * 8));
    }
  }
}

/**
 * Starts a write and rolls it back: the UPDATE changes no row, but SQLite takes the
 * write lock and checks that the file can be written, which it opens read-only without
 * a word when the system refuses writing. Throws SQLite's error (SQLITE_READONLY, …).
 * A lock held by another process (SQLITE_BUSY) says nothing either way and is let pass
 * at once, not waited for: a server starts (and stops on a signal) while another process
 * writes; `busyTimeoutMs` is put back after.
 */
function tryWriting(db: Database, busyTimeoutMs: number): void {
  db.run("PRAGMA busy_timeout = 0");
  try {
    db.run("BEGIN IMMEDIATE");
  } catch (error) {
    if ((error as { code?: unknown }).code === "SQLITE_BUSY") return;
    throw error;
  } finally {
    db.run(`PRAGMA busy_timeout = ${busyTimeoutMs}`);
  }
  try {
    db.run("UPDATE generation SET value = value WHERE 0");
  } finally {
    db.run("ROLLBACK");
  }
}

function toKey(row: KeyRow): ApiKey {
  return { id: row.id, name: row.name, plan: row.plan, createdAt: row.created_at, revokedAt: row.revoked_at, ...controlFields(row) };
}

function toAdminToken(row: AdminTokenRow): AdminToken {
  const token = { id: row.id, name: row.name, createdAt: row.created_at, revokedAt: row.revoked_at };
  return row.read_only ? { ...token, readOnly: true } : token;
}

/** The key as its previous secret finds it: working until the rotation's grace ends. */
function previousSecret(active: ActiveKey): ActiveKey {
  return { ...active, secretValidUntil: Date.parse(active.key.graceUntil ?? "1970-01-01T00:00:00Z") };
}

interface AuditRow {
  at: string;
  actor: string;
  action: string;
  target: string;
  changes: string;
}

/**
 * Removes a state file a command made and failed with, and the -wal, -shm and journal
 * SQLite keeps beside it. A removal that fails is let be: the error that made the
 * command fail is the one to tell.
 */
export function removeStateFiles(path: string): void {
  for (const file of [path, `${path}-wal`, `${path}-shm`, `${path}-journal`]) {
    try {
      rmSync(file, { force: true });
    } catch {}
  }
}

interface AuditPageRow extends AuditRow {
  seq: number;
}

function toAuditEntry(row: AuditRow): AuditEntry {
  return { at: row.at, actor: row.actor, action: row.action, target: row.target, changes: JSON.parse(row.changes) as Record<string, unknown> };
}

function toActiveKey(row: ActiveKeyRow): ActiveKey {
  return { key: toKey(row), plan: toPlan({ ...row, name: row.plan }) };
}

function toPlan(row: PlanRow): Plan {
  return { name: row.name, maxBatchSize: row.max_batch_size, monthlyUnits: row.monthly_units, rateLimit: row.rate_limit };
}
