import { Database, type Statement } from "bun:sqlite";
import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from "node:fs";
import { dirname } from "node:path";
import { migrate } from "./schema.ts";
import { hashSecret, newKeyId, newSecret } from "./secret.ts";
import {
  StoreError,
  type ActiveKey,
  type ApiKey,
  type AuthSnapshot,
  type Charge,
  type ChargeOutcome,
  type IssuedKey,
  type Plan,
  type PlanChanges,
  type Store,
} from "./store.ts";

interface KeyRow {
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

interface PendingCharge {
  charge: Charge;
  resolve: (outcome: ChargeOutcome) => void;
  reject: (error: unknown) => void;
}

const KEY_COLUMNS = "id, name, plan, created_at, revoked_at";
const PLAN_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * The Store on a SQLite file in WAL mode.
 *
 * Durability: with `synchronous=NORMAL` a WAL commit is written to the WAL file (in the
 * OS page cache) before COMMIT returns, and only checkpoints are fsynced. A process
 * killed at any moment (kill -9) loses nothing committed; only a power cut or kernel
 * crash could lose the last commits, which is the trade this service makes for speed.
 *
 * Charges are grouped: every charge made before the next turn of the event loop goes
 * into one IMMEDIATE transaction (one commit for many requests). IMMEDIATE takes the
 * write lock at BEGIN, so the check and the update of each charge see no other
 * writer, also from other processes sharing the file.
 */
export class SqliteStore implements Store {
  private pending: PendingCharge[] = [];
  private flushScheduled = false;
  private readonly statements: {
    used: Statement<{ used: number }, [string, string]>;
    addUsage: Statement<unknown, [string, string, number]>;
    generation: Statement<{ value: number }, []>;
  };

  private constructor(
    private readonly db: Database,
    private readonly clock: () => Date,
  ) {
    this.statements = {
      used: db.query("SELECT used FROM usage WHERE key_id = ?1 AND period = ?2"),
      addUsage: db.query(
        "INSERT INTO usage (key_id, period, used) VALUES (?1, ?2, ?3) ON CONFLICT (key_id, period) DO UPDATE SET used = used + excluded.used",
      ),
      generation: db.query("SELECT value FROM generation WHERE id = 1"),
    };
  }

  /**
   * Opens (creating if needed) a state file. A new file and a new parent directory are
   * created readable by their owner only: the file holds key hashes and usage.
   */
  static open(path: string, options: { clock?: () => Date } = {}): SqliteStore {
    if (path === ":memory:") return SqliteStore.fromDatabase(new Database(":memory:"), options);
    const directory = dirname(path);
    if (!existsSync(directory)) mkdirSync(directory, { recursive: true, mode: 0o700 });
    if (!existsSync(path)) {
      closeSync(openSync(path, "a", 0o600));
      chmodSync(path, 0o600);
    }
    return SqliteStore.fromDatabase(new Database(path, { create: true }), options);
  }

  /** A store on an open database; `:memory:` makes one that lives and dies with the process. */
  private static fromDatabase(db: Database, options: { clock?: () => Date }): SqliteStore {
    db.run("PRAGMA journal_mode = WAL");
    db.run("PRAGMA synchronous = NORMAL");
    db.run("PRAGMA busy_timeout = 10000");
    db.run("PRAGMA foreign_keys = ON");
    migrate(db);
    return new SqliteStore(db, options.clock ?? (() => new Date()));
  }

  private now(): string {
    return this.clock().toISOString();
  }

  async createKey(name: string, plan: string): Promise<IssuedKey> {
    const trimmed = name.trim();
    if (trimmed === "" || trimmed.length > 200) throw new StoreError("a key name must be 1 to 200 characters");
    if (!(await this.getPlan(plan))) throw new StoreError(`there is no plan "${plan}"`);
    const secret = newSecret();
    const id = newKeyId();
    this.db.query("INSERT INTO keys (id, name, plan, secret_hash, created_at) VALUES (?1, ?2, ?3, ?4, ?5)").run(id, trimmed, plan, hashSecret(secret), this.now());
    return { key: (await this.getKey(id))!, secret };
  }

  async listKeys(): Promise<ApiKey[]> {
    return this.db.query<KeyRow, []>(`SELECT ${KEY_COLUMNS} FROM keys ORDER BY created_at, rowid`).all().map(toKey);
  }

  async getKey(id: string): Promise<ApiKey | null> {
    const row = this.db.query<KeyRow, [string]>(`SELECT ${KEY_COLUMNS} FROM keys WHERE id = ?1`).get(id);
    return row ? toKey(row) : null;
  }

  async revokeKey(id: string): Promise<ApiKey | null> {
    this.db.query("UPDATE keys SET revoked_at = ?2 WHERE id = ?1 AND revoked_at IS NULL").run(id, this.now());
    return this.getKey(id);
  }

  async rotateKey(id: string): Promise<IssuedKey | null> {
    const secret = newSecret();
    const changed = this.db
      .query("UPDATE keys SET secret_hash = ?2, rotated_at = ?3 WHERE id = ?1 AND revoked_at IS NULL")
      .run(id, hashSecret(secret), this.now()).changes;
    if (changed === 0) return null;
    return { key: (await this.getKey(id))!, secret };
  }

  async listPlans(): Promise<Plan[]> {
    return this.db.query<PlanRow, []>("SELECT * FROM plans ORDER BY name").all().map(toPlan);
  }

  async getPlan(name: string): Promise<Plan | null> {
    const row = this.db.query<PlanRow, [string]>("SELECT * FROM plans WHERE name = ?1").get(name);
    return row ? toPlan(row) : null;
  }

  async setPlan(name: string, changes: PlanChanges): Promise<Plan> {
    if (!PLAN_NAME.test(name)) throw new StoreError(`"${name}" is not a plan name (letters, digits, '.', '_', '-'; at most 64)`);
    for (const [field, value] of Object.entries(changes)) {
      if (value !== undefined && value !== null && (!Number.isSafeInteger(value) || value < 1)) {
        throw new StoreError(`${field} must be a whole number of at least 1`);
      }
    }
    if (changes.maxBatchSize === null) throw new StoreError("maxBatchSize cannot be unlimited");
    return this.db
      .transaction(() => {
        const existing = this.db.query<PlanRow, [string]>("SELECT * FROM plans WHERE name = ?1").get(name);
        if (!existing) {
          const missing = (["maxBatchSize", "monthlyUnits", "rateLimit"] as const).filter((field) => changes[field] === undefined);
          if (missing.length > 0) {
            throw new StoreError(`the new plan "${name}" needs --max-batch, --monthly-units and --rate-limit (missing: ${missing.map(flagOf).join(", ")})`);
          }
        }
        const plan: Plan = {
          name,
          maxBatchSize: changes.maxBatchSize ?? existing!.max_batch_size,
          monthlyUnits: changes.monthlyUnits !== undefined ? changes.monthlyUnits : existing!.monthly_units,
          rateLimit: changes.rateLimit !== undefined ? changes.rateLimit : existing!.rate_limit,
        };
        this.db
          .query(
            `INSERT INTO plans (name, max_batch_size, monthly_units, rate_limit) VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT (name) DO UPDATE SET max_batch_size = ?2, monthly_units = ?3, rate_limit = ?4`,
          )
          .run(plan.name, plan.maxBatchSize, plan.monthlyUnits, plan.rateLimit);
        return plan;
      })
      .immediate();
  }

  async generation(): Promise<number> {
    return this.statements.generation.get()!.value;
  }

  async authSnapshot(): Promise<AuthSnapshot> {
    return this.db
      .transaction(() => {
        const generation = this.statements.generation.get()!.value;
        const rows = this.db
          .query<KeyRow & PlanRow & { secret_hash: string; plan_name: string }, []>(
            `SELECT k.id, k.name, k.plan, k.created_at, k.revoked_at, k.secret_hash,
                    p.name AS plan_name, p.max_batch_size, p.monthly_units, p.rate_limit
             FROM keys k JOIN plans p ON p.name = k.plan WHERE k.revoked_at IS NULL`,
          )
          .all();
        const keysByHash = new Map<string, ActiveKey>();
        for (const row of rows) keysByHash.set(row.secret_hash, { key: toKey(row), plan: toPlan({ ...row, name: row.plan_name }) });
        return { generation, keysByHash };
      })
      .deferred();
  }

  charge(charge: Charge): Promise<ChargeOutcome> {
    return new Promise((resolve, reject) => {
      this.pending.push({ charge, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits every pending charge in one transaction, then settles their promises. */
  private flush(): void {
    this.flushScheduled = false;
    const group = this.pending;
    this.pending = [];
    if (group.length === 0) return;
    let outcomes: ChargeOutcome[];
    try {
      outcomes = this.db.transaction(() => group.map(({ charge }) => this.apply(charge))).immediate();
    } catch (error) {
      for (const pending of group) pending.reject(error);
      return;
    }
    group.forEach((pending, i) => pending.resolve(outcomes[i]!));
  }

  private apply({ keyId, period, units, limit }: Charge): ChargeOutcome {
    const used = this.statements.used.get(keyId, period)?.used ?? 0;
    if (limit !== null && used + units > limit) return { ok: false, used };
    if (units > 0) this.statements.addUsage.run(keyId, period, units);
    return { ok: true, used: used + units };
  }

  async unitsUsed(keyId: string, period: string): Promise<number> {
    return this.statements.used.get(keyId, period)?.used ?? 0;
  }

  async close(): Promise<void> {
    this.flush();
    this.db.close();
  }
}

function flagOf(field: "maxBatchSize" | "monthlyUnits" | "rateLimit"): string {
  return { maxBatchSize: "--max-batch", monthlyUnits: "--monthly-units", rateLimit: "--rate-limit" }[field];
}

function toKey(row: KeyRow): ApiKey {
  return { id: row.id, name: row.name, plan: row.plan, createdAt: row.created_at, revokedAt: row.revoked_at };
}

function toPlan(row: PlanRow): Plan {
  return { name: row.name, maxBatchSize: row.max_batch_size, monthlyUnits: row.monthly_units, rateLimit: row.rate_limit };
}
