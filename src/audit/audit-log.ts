import { shownWebhookUrl } from "../events/webhook-url.ts";
import type { AuditEntry, AuditPosition, ChangeRecord, NewEvent, Store } from "../store/store.ts";

/** Who made a change: an admin token's id (`adm_…`), or `cli` for the command line. */
export type Actor = string;

/** The actor of every change made with the command line. */
export const CLI_ACTOR = "cli";

/** One change to record; `at` is the log's clock. */
export interface AuditRecord {
  readonly actor: Actor;
  /** `noun.verb` in the past tense, like the events of CONTRACT §16: `key.created`, `plan.updated`, `webhook.deleted`, … */
  readonly action: string;
  /** What was changed: a key's, token's or webhook's id, `plan:NAME`, … */
  readonly target: string;
  /** Field by field, `{"plan": {"from": "free", "to": "standard"}}` (see changesBetween); never a secret. */
  readonly changes?: Readonly<Record<string, unknown>>;
}

/** The text that replaces anything that looks like a secret or a secret's hash. */
export const REDACTED = "[redacted]";

/** Member names whose values are secrets whatever they look like. */
const SECRET_NAMES = new Set(["secret", "secret_hash", "secretHash", "key", "token", "password", "signing_secret"]);
/** iplookup's secrets (API keys, admin tokens, webhook secrets) and SHA-256 hex digests (secret hashes), anywhere in a string. */
const SECRET_TEXT = /\b(?:ipla?_|whsec_)[A-Za-z0-9_+/=-]{8,}|\b[0-9a-f]{64}\b/g;

/**
 * The audit log (CONTRACT §16): every change made through the admin API, the console or
 * the command line, with its time, actor, action, target and what changed. An entry is
 * written in the transaction of its change, never after it: whoever adds a kind of change
 * (webhooks, corrections, …) gives the store's change an Audit (store.ts) that answers
 * `change(…)`, and the change and its entry are committed together or not at all (a
 * change that fails, a 503 included, leaves no entry, and no change is left without
 * one). An entry never keeps a secret: members named like one are dropped, text that
 * looks like one (a key, token or webhook secret, a SHA-256 hash) is replaced by
 * "[redacted]" wherever it is (actor, action, target, values, member names), and a
 * webhook entry's URL is its shown form (shownWebhookUrl), whatever the caller passed.
 * Entries are scrubbed again as they are read, for those written before a rule was
 * added (a webhook's URL was recorded whole until the shown form was).
 */
export class AuditLog {
  constructor(
    private readonly store: Store,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** The entry of one change, at the log's clock's time, without any secret: what a store writes with the change. */
  entry(record: AuditRecord): AuditEntry {
    return scrubEntry({ at: this.now().toISOString(), actor: record.actor, action: record.action, target: record.target, changes: record.changes ?? {} });
  }

  /** What a store writes with a change (see Audit in store.ts): the change's entry, and the events that announce it. */
  change(record: AuditRecord, events: readonly NewEvent[] = []): ChangeRecord {
    return events.length > 0 ? { entry: this.entry(record), events } : { entry: this.entry(record) };
  }

  /** Entries of the UTC days from `from` to `to` (`YYYY-MM-DD`, both included), newest first, at most `limit`. */
  async list(from: string, to: string, limit: number): Promise<AuditEntry[]> {
    return (await this.store.listAudit(`${from}T00:00:00.000Z`, endOfDay(to), limit)).map(scrubEntry);
  }

  /**
   * A page of list(): the entries older than the cursor `before` (null: from the newest),
   * at most `limit`, and the cursor of the next page, null when these are the span's oldest.
   */
  async page(from: string, to: string, limit: number, before: string | null): Promise<{ entries: AuditEntry[]; next: string | null }> {
    const position = before === null ? null : parseAuditCursor(before);
    if (before !== null && position === null) throw new AuditCursorError(before);
    const page = await this.store.pageAudit(`${from}T00:00:00.000Z`, endOfDay(to), limit, position);
    return { entries: page.entries.map(scrubEntry), next: page.next && auditCursor(page.next) };
  }
}

/**
 * The end of a UTC day, as the (excluded) upper bound of its entries' times: 24:00 of the
 * day, not 00:00 of the next, so that 9999-12-31, the last day a span may name, has an
 * end written as every time is (the next day's ISO form is `+010000-01-01…`, which sorts
 * before every stored time in SQLite, and PostgreSQL refuses). As text it sorts after
 * every time of the day; PostgreSQL reads it as the next midnight.
 */
function endOfDay(day: string): string {
  return `${day}T24:00:00.000Z`;
}

/** A cursor not made by auditCursor: the caller's mistake, named in its message. */
export class AuditCursorError extends Error {
  constructor(readonly cursor: string) {
    super(`"${cursor}" is not the "next" of an audit log answer (written TIME_NUMBER, such as 2026-11-23T14:05:00.000Z_1234)`);
  }
}

/** The pattern of a cursor's text, as auditCursor writes it. */
export const AUDIT_CURSOR_PATTERN = "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z_\\d{1,15}$";

/**
 * The text of a place in the log (`2026-11-23T14:05:00.000Z_1234`: the time of the last
 * entry shown and its number in the log), handed out as `next` and taken back as
 * `before`: the page after it starts with the entry older than that one, whatever was
 * written since.
 */
export function auditCursor(position: AuditPosition): string {
  return `${position.at}_${position.seq}`;
}

/** The place a cursor names, or null for text auditCursor did not write. */
export function parseAuditCursor(text: string): AuditPosition | null {
  if (!new RegExp(AUDIT_CURSOR_PATTERN).test(text)) return null;
  const [at, seq] = text.split("_") as [string, string];
  const time = Date.parse(at);
  if (Number.isNaN(time) || new Date(time).toISOString() !== at) return null;
  return { at, seq: Number(seq) };
}

/**
 * The changes between two views of a thing, member by member: `{name: {from, to}}` for
 * each member whose JSON differs (undefined counts as null). `before` null: a creation.
 */
export function changesBetween(before: Readonly<Record<string, unknown>> | null, after: Readonly<Record<string, unknown>>): Record<string, { from: unknown; to: unknown }> {
  const changes: Record<string, { from: unknown; to: unknown }> = {};
  for (const name of new Set([...Object.keys(before ?? {}), ...Object.keys(after)])) {
    const from = before?.[name] ?? null;
    const to = after[name] ?? null;
    if (JSON.stringify(from) !== JSON.stringify(to)) changes[name] = { from, to };
  }
  return changes;
}

/**
 * A creation's changes where null is a value, not an absence (a plan's null limit is
 * "unlimited"): every member of `after`, null ones included, as `{from: null, to}`.
 */
export function everyMember(after: Readonly<Record<string, unknown>>): Record<string, { from: null; to: unknown }> {
  return Object.fromEntries(Object.entries(after).map(([name, to]) => [name, { from: null, to: to ?? null }]));
}

/**
 * An entry without anything that looks like a secret (see AuditLog): what the log writes,
 * what it answers of the entries it reads (the admin API, the console, `iplookup audit`),
 * and what a store keeps of an entry it imports (`state copy`, `backup`), since an entry
 * written before the log scrubbed member names, target, actor and action, or before it
 * recorded a webhook's URL in its shown form, may still hold a secret. Scrubbing a
 * scrubbed entry changes nothing: REDACTED looks like no secret, a name made unique by
 * " (2)" is left as it is, and a shown URL is shown as it is.
 */
export function scrubEntry(entry: AuditEntry): AuditEntry {
  return {
    at: entry.at,
    actor: scrubText(entry.actor),
    action: scrubText(entry.action),
    // A target may be text a caller chose (a plan's name is its URL's last segment).
    target: scrubText(entry.target),
    changes: scrub(entry.action.startsWith(WEBHOOK_ACTIONS) ? withShownUrl(entry.changes) : entry.changes) as Record<string, unknown>,
  };
}

/** The actions of webhooks (webhook.created, webhook.removed), whose `url` change is a webhook's URL. */
const WEBHOOK_ACTIONS = "webhook.";

/**
 * A webhook entry's changes with every text of its `url` member (`from`, `to`) in its
 * shown form: the path and query of a webhook's URL may hold the receiver's secret. Only
 * that member is the webhook's URL; others are left as they are.
 */
function withShownUrl(changes: Readonly<Record<string, unknown>>): Readonly<Record<string, unknown>> {
  // Read back from a store, changes are whatever JSON was stored: reading must not fail on it.
  if (typeof changes !== "object" || changes === null || !Object.hasOwn(changes, "url")) return changes;
  const shown = (value: unknown): unknown => {
    if (typeof value === "string") return shownWebhookUrl(value);
    if (Array.isArray(value)) return value.map(shown);
    if (typeof value === "object" && value !== null) return Object.fromEntries(Object.entries(value).map(([name, member]) => [name, shown(member)]));
    return value;
  };
  return { ...changes, url: shown(changes.url) };
}

/** Text with everything that looks like a secret replaced by REDACTED. */
function scrubText(text: string): string {
  return text.replace(SECRET_TEXT, REDACTED);
}

/**
 * A copy of a JSON value without anything that looks like a secret (see AuditLog), in
 * member names as in values: metadata is an object of the caller's, whose names are as
 * free as its values. Members whose names are redacted alike are all kept: the names
 * left as they were keep theirs, and each redacted name that would repeat one taken
 * gets " (2)", " (3)", … in the order of the object, so no member silently replaces
 * another and no name is given twice.
 */
export function scrub(value: unknown): unknown {
  if (typeof value === "string") return scrubText(value);
  if (Array.isArray(value)) return value.map(scrub);
  if (typeof value === "object" && value !== null) {
    const members = Object.entries(value).filter(([name]) => !SECRET_NAMES.has(name));
    const cleanNames = members.map(([name]) => scrubText(name));
    const taken = new Set(members.map(([name]) => name).filter((name, at) => cleanNames[at] === name));
    const out: Record<string, unknown> = {};
    members.forEach(([name, member], at) => {
      let clean = cleanNames[at] as string;
      if (clean !== name) {
        const base = clean;
        for (let count = 2; taken.has(clean); count++) clean = `${base} (${count})`;
        taken.add(clean);
      }
      // Defined, not assigned: a member named __proto__ (metadata may hold one) is a member.
      Object.defineProperty(out, clean, { value: scrub(member), enumerable: true, writable: true, configurable: true });
    });
    return out;
  }
  return value;
}
