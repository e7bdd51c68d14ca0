import { afterAll, describe, expect, test } from "bun:test";
import { Database } from "bun:sqlite";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashSecret } from "../../src/store/secret.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { StoreError } from "../../src/store/store.ts";

const root = mkdtempSync(join(tmpdir(), "iplookup-store-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let count = 0;
const freshPath = () => join(root, `s${++count}`, "state.db");

describe("opening", () => {
  test("creates the file and its directory for the owner only, in WAL mode", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, "..")).mode & 0o777).toBe(0o700);
    await store.close();
    const db = new Database(path);
    expect(db.query("PRAGMA journal_mode").get()).toEqual({ journal_mode: "wal" });
    db.close();
  });

  test("seeds the plans once; reopening keeps changes", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    expect(await store.listPlans()).toEqual([
      { name: "free", maxBatchSize: 100, monthlyUnits: 100_000, rateLimit: 10 },
      { name: "standard", maxBatchSize: 1000, monthlyUnits: 10_000_000, rateLimit: 100 },
      { name: "unlimited", maxBatchSize: 10_000, monthlyUnits: null, rateLimit: null },
    ]);
    await store.setPlan("free", { rateLimit: 5 });
    await store.close();
    const again = SqliteStore.open(path);
    expect((await again.getPlan("free"))?.rateLimit).toBe(5);
    await again.close();
  });
});

describe("keys", () => {
  test("only the hash of a secret is stored", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    const { key, secret } = await store.createKey("acme", "free");
    expect(secret).toMatch(/^ipl_[A-Za-z0-9_-]{43}$/);
    expect(key).toMatchObject({ name: "acme", plan: "free", revokedAt: null });
    expect(key.id).toMatch(/^key_[a-z2-7]{16}$/);
    const snapshot = await store.authSnapshot();
    expect(snapshot.keysByHash.get(hashSecret(secret))?.key.id).toBe(key.id);
    await store.close();
    for (const file of [path, `${path}-wal`]) {
      try {
        expect(readFileSync(file).includes(secret)).toBe(false);
        expect(readFileSync(file).includes(secret.slice(4))).toBe(false);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      }
    }
  });

  test("lifecycle: create, list, rotate, revoke", async () => {
    const store = SqliteStore.open(freshPath());
    const a = await store.createKey("a", "free");
    const b = await store.createKey("b", "standard");
    expect((await store.listKeys()).map((key) => key.id)).toEqual([a.key.id, b.key.id]);

    const rotated = (await store.rotateKey(a.key.id))!;
    expect(rotated.key.id).toBe(a.key.id);
    expect(rotated.secret).not.toBe(a.secret);
    let snapshot = await store.authSnapshot();
    expect(snapshot.keysByHash.has(hashSecret(a.secret))).toBe(false);
    expect(snapshot.keysByHash.has(hashSecret(rotated.secret))).toBe(true);

    const revoked = (await store.revokeKey(b.key.id))!;
    expect(revoked.revokedAt).not.toBeNull();
    expect((await store.revokeKey(b.key.id))!.revokedAt).toBe(revoked.revokedAt);
    snapshot = await store.authSnapshot();
    expect(snapshot.keysByHash.has(hashSecret(b.secret))).toBe(false);
    expect(await store.rotateKey(b.key.id)).toBeNull();
    expect(await store.revokeKey("key_missing")).toBeNull();
    expect(await store.getKey("key_missing")).toBeNull();
    await store.close();
  });

  test("a key needs a known plan and a name", async () => {
    const store = SqliteStore.open(freshPath());
    await expect(store.createKey("x", "gold")).rejects.toThrow(StoreError);
    await expect(store.createKey("  ", "free")).rejects.toThrow(StoreError);
    expect(await store.listKeys()).toEqual([]);
    await store.close();
  });
});

describe("plans", () => {
  test("a new plan needs every field; an existing one keeps what is left out", async () => {
    const store = SqliteStore.open(freshPath());
    await expect(store.setPlan("gold", { maxBatchSize: 10 })).rejects.toThrow(/--monthly-units, --rate-limit/);
    expect(await store.getPlan("gold")).toBeNull();
    expect(await store.setPlan("gold", { maxBatchSize: 10, monthlyUnits: null, rateLimit: 3 })).toEqual({ name: "gold", maxBatchSize: 10, monthlyUnits: null, rateLimit: 3 });
    expect(await store.setPlan("gold", { monthlyUnits: 50 })).toEqual({ name: "gold", maxBatchSize: 10, monthlyUnits: 50, rateLimit: 3 });
    expect(await store.setPlan("gold", { rateLimit: null })).toEqual({ name: "gold", maxBatchSize: 10, monthlyUnits: 50, rateLimit: null });
    await store.close();
  });

  test("bad values and names are refused", async () => {
    const store = SqliteStore.open(freshPath());
    await expect(store.setPlan("free", { maxBatchSize: 0 })).rejects.toThrow(StoreError);
    await expect(store.setPlan("free", { monthlyUnits: 1.5 })).rejects.toThrow(StoreError);
    await expect(store.setPlan("free", { rateLimit: -1 })).rejects.toThrow(StoreError);
    await expect(store.setPlan("bad name", { maxBatchSize: 1, monthlyUnits: 1, rateLimit: 1 })).rejects.toThrow(StoreError);
    expect((await store.getPlan("free"))?.maxBatchSize).toBe(100);
    await store.close();
  });
});

describe("the change counter", () => {
  test("moves on every key and plan change, also from another connection", async () => {
    const path = freshPath();
    const store = SqliteStore.open(path);
    const other = SqliteStore.open(path);
    let last = await store.generation();
    const moved = async () => {
      const now = await store.generation();
      const changed = now !== last;
      last = now;
      return changed;
    };
    const { key } = await other.createKey("k", "free");
    expect(await moved()).toBe(true);
    await other.rotateKey(key.id);
    expect(await moved()).toBe(true);
    await other.setPlan("free", { rateLimit: 11 });
    expect(await moved()).toBe(true);
    await other.revokeKey(key.id);
    expect(await moved()).toBe(true);
    await other.charge({ keyId: key.id, period: "2026-11", units: 5, limit: null });
    expect(await moved()).toBe(false);
    expect((await store.authSnapshot()).generation).toBe(last);
    await other.close();
    await store.close();
  });
});

describe("charges", () => {
  test("charge what fits, refuse what does not, with nothing charged", async () => {
    const store = SqliteStore.open(freshPath());
    const { key } = await store.createKey("k", "free");
    const charge = (units: number, limit: number | null = 10) => store.charge({ keyId: key.id, period: "2026-11", units, limit });
    expect(await charge(4)).toEqual({ ok: true, used: 4 });
    expect(await charge(6)).toEqual({ ok: true, used: 10 });
    expect(await charge(1)).toEqual({ ok: false, used: 10 });
    expect(await charge(0)).toEqual({ ok: true, used: 10 });
    expect(await charge(5, null)).toEqual({ ok: true, used: 15 });
    expect(await store.unitsUsed(key.id, "2026-11")).toBe(15);
    expect(await store.unitsUsed(key.id, "2026-12")).toBe(0);
    await store.close();
  });

  test("200 concurrent charges never overspend", async () => {
    const store = SqliteStore.open(freshPath());
    const { key } = await store.createKey("k", "free");
    const outcomes = await Promise.all(Array.from({ length: 200 }, () => store.charge({ keyId: key.id, period: "2026-11", units: 7, limit: 1000 })));
    expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(Math.floor(1000 / 7));
    expect(await store.unitsUsed(key.id, "2026-11")).toBe(Math.floor(1000 / 7) * 7);
    await store.close();
  });

  test("two connections charging the same key never overspend", async () => {
    const path = freshPath();
    const a = SqliteStore.open(path);
    const b = SqliteStore.open(path);
    const { key } = await a.createKey("k", "free");
    const charge = (store: SqliteStore) => store.charge({ keyId: key.id, period: "2026-11", units: 3, limit: 100 });
    const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => charge(i % 2 ? a : b)));
    expect(outcomes.filter((outcome) => outcome.ok)).toHaveLength(33);
    expect(await a.unitsUsed(key.id, "2026-11")).toBe(99);
    await a.close();
    await b.close();
  });

  test("a group that fails to commit rejects every charge in it and charges none", async () => {
    const store = SqliteStore.open(freshPath());
    const { key } = await store.createKey("k", "free");
    const good = store.charge({ keyId: key.id, period: "2026-11", units: 1, limit: null });
    const bad = store.charge({ keyId: "key_unknown", period: "2026-11", units: 1, limit: null });
    const settled = await Promise.allSettled([good, bad]);
    expect(settled.map((outcome) => outcome.status)).toEqual(["rejected", "rejected"]);
    expect(await store.unitsUsed(key.id, "2026-11")).toBe(0);
    await store.close();
  });

  test("kill -9 loses no acknowledged charge", async () => {
    const path = freshPath();
    const setup = SqliteStore.open(path);
    const { key } = await setup.createKey("k", "unlimited");
    await setup.close();
    const child = Bun.spawn([process.execPath, join(import.meta.dir, "..", "fixtures", "store", "charge-loop.ts"), path, key.id], { stdout: "pipe" });
    const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
    let output = "";
    const deadline = Date.now() + 5000;
    while (!output.includes("\n") && Date.now() < deadline) {
      const chunk = await reader.read();
      if (chunk.done) break;
      output += new TextDecoder().decode(chunk.value);
    }
    await Bun.sleep(300);
    child.kill("SIGKILL");
    await child.exited;
    for (;;) {
      const chunk = await reader.read();
      if (chunk.done) break;
      output += new TextDecoder().decode(chunk.value);
    }
    const acknowledged = output.trim().split("\n").filter(Boolean).map(Number);
    const last = acknowledged.at(-1) ?? 0;
    expect(last).toBeGreaterThan(0);
    const db = new Database(path);
    expect(db.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
    db.close();
    const reopened = SqliteStore.open(path);
    expect(await reopened.unitsUsed(key.id, "2026-11")).toBeGreaterThanOrEqual(last);
    await reopened.close();
  });
});
