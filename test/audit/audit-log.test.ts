import { expect, test } from "bun:test";
import { AuditLog, REDACTED, changesBetween, scrub, scrubEntry } from "../../src/audit/audit-log.ts";
import { hashSecret } from "../../src/store/secret.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";

test("an entry keeps no secret whatever it is given: secret-named members dropped, secret-looking text redacted", async () => {
  const store = SqliteStore.open(":memory:");
  const issued = await store.createKey("k", "free");
  const token = await store.createAdminToken("ops");
  const audit = new AuditLog(store, () => new Date("2026-11-15T12:00:00Z"));
  await store.webhooks.createWebhook("https://hooks.example/x", ["key.created"], (hook) =>
    audit.change({
      actor: "cli",
      action: "webhook.created",
      target: "whk_1",
      changes: {
        secret: hook.secret,
        secret_hash: hashSecret(issued.secret),
        note: `rotated from ${issued.secret} by ${token.secret}`,
        nested: { list: [hashSecret(token.secret), "whsec_abcdefghijklmnopqrstuvwxyz012345"], key: issued.secret, url: "https://hooks.example/x" },
        plan: { from: "free", to: "standard" },
      },
    }),
  );
  const [entry] = await audit.list("2026-11-15", "2026-11-15", 10);
  expect(entry).toEqual({
    at: "2026-11-15T12:00:00.000Z",
    actor: "cli",
    action: "webhook.created",
    target: "whk_1",
    changes: { note: `rotated from ${REDACTED} by ${REDACTED}`, nested: { list: [REDACTED, REDACTED], url: "https://hooks.example/x" }, plan: { from: "free", to: "standard" } },
  });
  const text = JSON.stringify(await store.exportState());
  const audited = JSON.stringify((await store.exportState()).audit);
  for (const secret of [issued.secret, token.secret]) {
    expect(audited).not.toContain(secret);
    expect(audited).not.toContain(hashSecret(secret));
  }
  expect(text).toContain(hashSecret(issued.secret)); // (the keys themselves keep their hashes, as they must)
  await store.close();
});

test("a webhook entry's url change is the URL's origin and /…, however it was recorded; no other member, nor another action's url, is touched", () => {
  const at = "2026-11-15T12:00:00.000Z";
  const written = { at, actor: "cli", action: "webhook.created", target: "wh_1", changes: { url: { from: null, to: "https://hooks.slack.com/services/T0/B0/XXXX" }, note: { from: null, to: "https://x.example/kept" } } };
  const shown = scrubEntry(written);
  expect(shown.changes).toEqual({ url: { from: null, to: "https://hooks.slack.com/…" }, note: { from: null, to: "https://x.example/kept" } });
  expect(scrubEntry(shown)).toEqual(shown);
  const key = { at, actor: "cli", action: "key.updated", target: "key_1", changes: { metadata: { from: null, to: { url: "https://x.example/kept" } }, url: { from: null, to: "https://x.example/kept" } } };
  expect(scrubEntry(key)).toEqual(key);
  // Changes stored as no object (never written so, but read back as stored) are read, not refused.
  expect(scrubEntry({ ...written, changes: null as unknown as Record<string, unknown> }).changes).toBeNull();
});

test("list spans whole UTC days, both ends included", async () => {
  const store = SqliteStore.open(":memory:");
  for (const at of ["2026-11-14T23:59:59.999Z", "2026-11-15T00:00:00.000Z", "2026-11-16T23:59:59.999Z", "2026-11-17T00:00:00.000Z"]) {
    await store.createAdminToken("t", () => new AuditLog(store, () => new Date(at)).change({ actor: "cli", action: "x.y", target: at }));
  }
  expect((await new AuditLog(store).list("2026-11-15", "2026-11-16", 10)).map((entry) => entry.target)).toEqual(["2026-11-16T23:59:59.999Z", "2026-11-15T00:00:00.000Z"]);
  await store.close();
});

test("changesBetween: the members whose JSON differs, a creation from null", () => {
  expect(changesBetween({ plan: "free", cidrs: ["a"], same: 1 }, { plan: "gold", cidrs: ["a"], same: 1, added: true })).toEqual({ plan: { from: "free", to: "gold" }, added: { from: null, to: true } });
  expect(changesBetween(null, { name: "k" })).toEqual({ name: { from: null, to: "k" } });
  expect(scrub("a 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef b")).toBe(`a ${REDACTED} b`);
});

test("scrub keeps a member named __proto__ (metadata may hold one) as a member", () => {
  const metadata = JSON.parse('{"team":"geo","__proto__":{"owner":"alice"}}');
  expect(JSON.stringify(scrub(metadata))).toBe('{"team":"geo","__proto__":{"owner":"alice"}}');
  expect(Object.getPrototypeOf(scrub(metadata))).toBe(Object.prototype);
});

test("member names that look like a secret are redacted, and two redacted alike are both kept under distinct names", () => {
  const live = "ipl_abcdefghijklmnopqrstuvwx";
  const other = "ipla_0123456789abcdefghijkl";
  const metadata = { [live]: "x", team: "geo", [other]: "y", "[redacted]": "z", [`note ${live}`]: { [other]: 1 } };
  expect(scrub(metadata)).toEqual({
    // A name left as it was keeps it; redacted ones take the next free " (N)", in order.
    [REDACTED]: "z",
    [`${REDACTED} (2)`]: "x",
    team: "geo",
    [`${REDACTED} (3)`]: "y",
    [`note ${REDACTED}`]: { [REDACTED]: 1 },
  });
  expect(Object.keys(scrub(metadata) as object)).toEqual([`${REDACTED} (2)`, "team", `${REDACTED} (3)`, REDACTED, `note ${REDACTED}`]);
  // Redacting twice changes nothing more.
  expect(scrub(scrub(metadata))).toEqual(scrub(metadata));
});

test("an entry's target, actor and action are redacted too, whatever the caller passed", () => {
  const live = "ipl_abcdefghijklmnopqrstuvwx";
  const entry = new AuditLog(SqliteStore.open(":memory:"), () => new Date("2026-11-15T12:00:00Z")).entry({
    actor: `adm_1 ${live}`,
    action: `plan.updated ${live}`,
    target: `plan:${live}`,
    changes: { metadata: { from: null, to: { [live]: "x" } } },
  });
  expect(entry).toEqual({
    at: "2026-11-15T12:00:00.000Z",
    actor: `adm_1 ${REDACTED}`,
    action: `plan.updated ${REDACTED}`,
    target: `plan:${REDACTED}`,
    changes: { metadata: { from: null, to: { [REDACTED]: "x" } } },
  });
  expect(JSON.stringify(entry)).not.toContain(live);
});
