import type { Static } from "@sinclair/typebox";
import { ApiError } from "../errors/api-error.ts";
import type { DataSetInfo } from "../index/network-record.ts";
import { billingPeriod } from "../store/period.ts";
import { addDays, dayOf, daysBetween, isDayId, spanStart } from "../store/usage-days.ts";
import { StoreError, type ApiKey, type IssuedKey, type KeyActivity, type Plan, type Store } from "../store/store.ts";
import { AuditCursorError, AuditLog, type Actor } from "../audit/audit-log.ts";
import { keyJson } from "../access/key-json.ts";
import { KeyService } from "../access/key-service.ts";
import { setPlanAudited } from "../access/plan-service.ts";
import { ControlValueError, controlsFromJson, parseGrace, type ControlJson } from "../access/key-control-values.ts";
import type { AdminKey, AdminPlan, AdminStatus, AdminUsage, AuditList, IssuedKey as IssuedKeySchema, PutPlanRequest } from "./admin-schemas.ts";

/** The longest span `GET /admin/v1/usage` answers, in days (CONTRACT §10). */
export const MAX_USAGE_DAYS = 400;
/** The span answered when the query names none: the last 30 days, today included. */
export const DEFAULT_USAGE_DAYS = 30;
/** Audit entries answered at once: by default, and at most. */
export const DEFAULT_AUDIT_ENTRIES = 1000;
export const MAX_AUDIT_ENTRIES = 10_000;

export interface AdminServiceDeps {
  readonly store: Store;
  /** The wall clock: today's date and the current period. */
  readonly now: () => Date;
  readonly version: string;
  /** Threads serving the public port. */
  readonly workers: number;
  /** Seconds since the server started. */
  readonly uptimeSeconds: () => number;
  /** The data set answering now (a reload changes it). */
  readonly dataInfo: () => DataSetInfo;
}

/**
 * What the admin API does, in the contract's terms and JSON shapes, without seeing a
 * request: the HTTP layer validates shapes and hands over plain values. Refusals are
 * ApiErrors (`not_found` for an unknown key or plan, `invalid_request` for a value the
 * store refuses), which the HTTP layer turns into problem+json like the public API's.
 */
export class AdminService {
  private readonly audit: AuditLog;
  private readonly keys: KeyService;

  constructor(private readonly deps: AdminServiceDeps) {
    this.audit = new AuditLog(deps.store, deps.now);
    this.keys = new KeyService(deps.store, this.audit, { now: deps.now });
  }

  async listKeys(): Promise<Static<typeof AdminKey>[]> {
    const [keys, activity] = await Promise.all([this.deps.store.listKeys(), this.activity()]);
    return keys.map((key) => adminKeyJson(key, activity.get(key.id)));
  }

  /** Creates a key, with its controls when the body gives any. */
  async createKey(actor: Actor, body: { name: string; plan?: string } & ControlJson): Promise<Static<typeof IssuedKeySchema>> {
    const plan = body.plan ?? "free";
    const changes = this.controls(body);
    await this.requirePlan(plan);
    const controls = { expiresAt: changes.expiresAt ?? null, allowedCidrs: changes.allowedCidrs ?? null, allowedOrigins: changes.allowedOrigins ?? null, metadata: changes.metadata ?? null };
    return issuedJson(await this.refusals(() => this.keys.create(actor, body.name, plan, controls)));
  }

  /** Rotates a key; with `grace`, its old secret keeps working that long. */
  async rotateKey(actor: Actor, id: string, grace?: string): Promise<Static<typeof IssuedKeySchema>> {
    const graceMs = grace === undefined ? 0 : this.values(() => parseGrace(grace));
    await this.activeKey(id);
    const rotated = await this.keys.rotate(actor, id, graceMs);
    if (!rotated) throw revokedMeanwhile(id);
    return issuedJson(rotated);
  }

  /**
   * Revokes a key; a key revoked already, before or while this request ran, is answered as
   * it is, with the revoked_at of the revocation that was made (revoking is idempotent).
   */
  async revokeKey(actor: Actor, id: string): Promise<Static<typeof AdminKey>> {
    await this.key(id);
    const revocation = await this.keys.revoke(actor, id);
    if (!revocation) throw noSuchKey(id);
    return this.withActivity(revocation.key);
  }

  /** PATCH: the plan and controls given change, in one step; the rest stay. */
  async updateKey(actor: Actor, id: string, body: { plan?: string } & ControlJson): Promise<Static<typeof AdminKey>> {
    const changes = this.controls(body);
    await this.activeKey(id);
    if (body.plan !== undefined) await this.requirePlan(body.plan);
    const updated = await this.refusals(() => this.keys.update(actor, id, { ...changes, ...(body.plan !== undefined ? { plan: body.plan } : {}) }));
    if (!updated) throw noSuchKey(id);
    return this.withActivity(updated);
  }

  /**
   * The audit log of the days from `from` to `to` (default: the last 30), newest first, a
   * page at a time: `before` is the `next` of the page before.
   */
  async auditLog(query: { from?: string; to?: string; limit?: string; before?: string }): Promise<Static<typeof AuditList>> {
    const { from, to } = this.span(query);
    const limit = query.limit === undefined ? DEFAULT_AUDIT_ENTRIES : Number(query.limit);
    if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_AUDIT_ENTRIES) throw new ApiError("invalid_request", `limit: ${query.limit} is not a whole number from 1 to ${MAX_AUDIT_ENTRIES}`);
    let page: Awaited<ReturnType<AuditLog["page"]>>;
    try {
      page = await this.audit.page(from, to, limit, query.before ?? null);
    } catch (error) {
      if (error instanceof AuditCursorError) throw new ApiError("invalid_request", `before: ${error.message}`);
      throw error;
    }
    return { entries: page.entries.map((entry) => ({ at: entry.at, actor: entry.actor, action: entry.action, target: entry.target, changes: { ...entry.changes } })), next: page.next };
  }

  /** Controls of a request body, checked (invalid_request for a bad value). */
  private controls(body: ControlJson) {
    return this.values(() => controlsFromJson(body, this.deps.now().getTime()));
  }

  private values<T>(parse: () => T): T {
    try {
      return parse();
    } catch (error) {
      if (error instanceof ControlValueError) throw new ApiError("invalid_request", error.message);
      throw error;
    }
  }

  async listPlans(): Promise<Static<typeof AdminPlan>[]> {
    return (await this.deps.store.listPlans()).map(planJson);
  }

  /** Creates the plan, or sets all three of its values. */
  async putPlan(actor: Actor, name: string, body: Static<typeof PutPlanRequest>): Promise<Static<typeof AdminPlan>> {
    const plan = await this.refusals(() =>
      setPlanAudited(this.deps.store, this.audit, actor, name, { maxBatchSize: body.max_batch_size, monthlyUnits: body.monthly_units, rateLimit: body.rate_limit }),
    );
    return planJson(plan);
  }

  /**
   * Use per day from `from` to `to` (inclusive; default the last 30 days, today
   * included), every day listed, and the keys with use in the span, most units first.
   */
  async usage(query: { from?: string; to?: string; key?: string }): Promise<Static<typeof AdminUsage>> {
    const { from, to, span } = this.span(query);
    if (query.key !== undefined) await this.key(query.key);
    const [used, keys] = await Promise.all([this.deps.store.usageByDay(from, to, query.key), this.deps.store.usageByKey(from, to)]);
    const byDay = new Map(used.map((day) => [day.day, day]));
    const days = Array.from({ length: span }, (_, i) => {
      const date = addDays(from, i);
      const day = byDay.get(date);
      return { date, requests: day?.requests ?? 0, units: day?.units ?? 0 };
    });
    return {
      from,
      to,
      days,
      keys: keys.filter((key) => query.key === undefined || key.keyId === query.key).map((key) => ({ id: key.keyId, name: key.name, requests: key.requests, units: key.units })),
    };
  }

  status(): Static<typeof AdminStatus> {
    const info = this.deps.dataInfo();
    return {
      version: this.deps.version,
      uptime_seconds: Math.max(0, Math.floor(this.deps.uptimeSeconds())),
      workers: this.deps.workers,
      data: {
        data_version: info.dataVersion,
        built_at: info.builtAt,
        sources: info.sources.map((source) => ({
          name: source.name,
          origin: source.origin,
          version: source.version,
          built_at: source.builtAt === "" ? null : source.builtAt,
          license: source.license,
          attribution: source.attribution,
          url: source.url,
          format: source.format,
          signal: source.signal ?? null,
        })),
      },
    };
  }

  /** The days of a query's `from` and `to`: checked, with the defaults (the last 30 days) and at most 400. */
  private span(query: { from?: string; to?: string }): { from: string; to: string; span: number } {
    for (const field of ["from", "to"] as const) {
      const value = query[field];
      if (value !== undefined && !isDayId(value)) throw new ApiError("invalid_request", `${field}: "${value}" is not a day written YYYY-MM-DD`);
    }
    const to = query.to ?? dayOf(this.deps.now().getTime());
    const from = query.from ?? spanStart(to, DEFAULT_USAGE_DAYS);
    const span = daysBetween(from, to);
    if (span < 1) throw new ApiError("invalid_request", `from (${from}) is after to (${to})`);
    if (span > MAX_USAGE_DAYS) throw new ApiError("invalid_request", `from ${from} to ${to} is ${span} days; at most ${MAX_USAGE_DAYS} are answered at once`);
    return { from, to, span };
  }

  private async activity(): Promise<Map<string, KeyActivity>> {
    const period = billingPeriod(this.deps.now()).id;
    return new Map((await this.deps.store.keyActivity(period)).map((row) => [row.keyId, row]));
  }

  private async withActivity(key: ApiKey): Promise<Static<typeof AdminKey>> {
    return adminKeyJson(key, (await this.activity()).get(key.id));
  }

  private async key(id: string): Promise<ApiKey> {
    const key = await this.deps.store.getKey(id);
    if (!key) throw noSuchKey(id);
    return key;
  }

  private async activeKey(id: string): Promise<ApiKey> {
    const key = await this.key(id);
    if (key.revokedAt !== null) throw new ApiError("invalid_request", `key ${id} was revoked on ${key.revokedAt}; a revoked key cannot be changed`);
    return key;
  }

  private async requirePlan(name: string): Promise<Plan> {
    const plan = await this.deps.store.getPlan(name);
    if (!plan) throw new ApiError("not_found", `there is no plan "${name}"`);
    return plan;
  }

  /** Runs a store change, answering what the store refuses (a bad name, a revocation meanwhile) as invalid_request. */
  private async refusals<T>(change: () => Promise<T>): Promise<T> {
    try {
      return await change();
    } catch (error) {
      if (error instanceof StoreError) throw new ApiError("invalid_request", error.message);
      throw error;
    }
  }
}

function noSuchKey(id: string): ApiError {
  return new ApiError("not_found", `there is no key ${id}`);
}

function revokedMeanwhile(id: string): ApiError {
  return new ApiError("invalid_request", `key ${id} was revoked meanwhile; nothing changed`);
}

function adminKeyJson(key: ApiKey, activity: KeyActivity | undefined): Static<typeof AdminKey> {
  const { id, name, plan, created_at, revoked_at, ...controls } = keyJson(key);
  return { id, name, plan, created_at, revoked_at, last_used_at: activity?.lastUsedAt ?? null, units_this_period: activity?.units ?? 0, ...controls };
}

function issuedJson(issued: IssuedKey): Static<typeof IssuedKeySchema> {
  const json = { id: issued.key.id, key: issued.secret, name: issued.key.name, plan: issued.key.plan };
  return issued.key.graceUntil ? { ...json, grace_until: issued.key.graceUntil } : json;
}

function planJson(plan: Plan): Static<typeof AdminPlan> {
  return { name: plan.name, max_batch_size: plan.maxBatchSize, monthly_units: plan.monthlyUnits, rate_limit: plan.rateLimit };
}
