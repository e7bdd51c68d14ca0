import { describe, expect, test } from "bun:test";
import { createHmac } from "node:crypto";
import { emitExpiringKeys, EXPIRING_NOTICE_MS } from "../../src/events/emit.ts";
import { nextAttemptAt, retryDelayMs, RETRY_FOR_MS } from "../../src/events/retry-schedule.ts";
import { newWebhookSecret, signatureHeader } from "../../src/events/signature.ts";
import { crossedThresholds, crossesThreshold } from "../../src/events/usage-thresholds.ts";
import { shownWebhookUrl, webhookUrlError } from "../../src/events/webhook-url.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";

describe("usage thresholds", () => {
  test("a line is crossed when before < line ≤ after, in whole numbers", () => {
    expect(crossedThresholds(79, 80, 100)).toEqual([80]);
    expect(crossedThresholds(80, 81, 100)).toEqual([]);
    expect(crossedThresholds(0, 100, 100)).toEqual([80, 90, 100]);
    expect(crossedThresholds(89, 99, 100)).toEqual([90]);
    // 80% of 7 is 5.6: crossed at 6, not at 5.
    expect(crossedThresholds(4, 5, 7)).toEqual([]);
    expect(crossedThresholds(5, 6, 7)).toEqual([80]);
    expect(crossedThresholds(0, 10, null)).toEqual([]);
    expect(crossedThresholds(5, 5, 10)).toEqual([]);
    for (const [before, after, limit] of [[79, 80, 100], [80, 81, 100], [4, 5, 7], [5, 6, 7], [0, 1, 1]] as const) {
      expect(crossesThreshold(before, after, limit)).toBe(crossedThresholds(before, after, limit).length > 0);
    }
  });
});

describe("the retry schedule", () => {
  test("the first retry within a minute, doubling, capped, ending 24 hours after the event", () => {
    expect(retryDelayMs(1)).toBe(30_000);
    expect(retryDelayMs(2)).toBe(60_000);
    expect(retryDelayMs(20)).toBe(4 * 3_600_000);
    expect(nextAttemptAt(1, 1000, 1000)).toBe(31_000);
    // Near the end the last try is at the 24-hour mark, and one failing then is given up.
    expect(nextAttemptAt(12, RETRY_FOR_MS - 1000, 0)).toBe(RETRY_FOR_MS);
    expect(nextAttemptAt(13, RETRY_FOR_MS, 0)).toBeNull();
  });
});

describe("signatures", () => {
  test("v1, base64 HMAC-SHA256 of id.timestamp.body keyed with the secret's bytes (the Standard Webhooks example)", () => {
    // The example of the Standard Webhooks specification.
    const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    const id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
    const body = '{"test": 2432232314}';
    expect(signatureHeader(secret, id, 1614265330, body)).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    const fresh = newWebhookSecret();
    expect(fresh).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const mac = createHmac("sha256", Buffer.from(fresh.slice(6), "base64")).update(`${id}.1.${body}`).digest("base64");
    expect(signatureHeader(fresh, id, 1, body)).toBe(`v1,${mac}`);
  });
});

describe("webhook URLs", () => {
  test("http and https to any host; no other scheme, no credentials, no fragment, no spaces", () => {
    for (const ok of ["http://127.0.0.1:8080/hook", "https://hooks.example.com/x?y=1", "http://[::1]/h", "http://localhost/"]) expect(webhookUrlError(ok)).toBeNull();
    for (const bad of ["ftp://example.com/", "javascript:alert(1)", "http://u:p@example.com/", "https://example.com/#x", "https://exa mple.com/", "example.com", "", `https://example.com/${"a".repeat(2000)}`]) {
      expect({ bad, refused: webhookUrlError(bad) !== null }).toEqual({ bad, refused: true });
    }
  });

  test("the host is read from the text as written: URL() reads http:///x and http:x as http://x/, and they are refused; a state holding one still copies", () => {
    for (const bad of ["http:///x", "http:x", "https:/x", "http:\\\\x/"]) {
      expect({ bad, refused: webhookUrlError(bad) }).toEqual({ bad, refused: expect.stringContaining("names no host") });
    }
    expect(webhookUrlError("http:///x")).toBe("the URL names no host: write it as http://HOST/…");
    // An empty user name, which URL() drops, is user info all the same.
    expect(webhookUrlError("http://@127.0.0.1/x")).toContain("no credentials");
    for (const stored of ["http:///x", "http:x"]) expect(webhookUrlError(stored, "stored")).toBeNull();
    for (const ok of ["HTTP://Example.com:80/x", "http://[::1]:8080/h?u=a@b", "https://hooks.example.com/a@b"]) expect(webhookUrlError(ok)).toBeNull();
  });

  test("an empty # is a fragment and an empty ? an empty query: both refused in a new URL, copied in a stored one", () => {
    for (const bad of ["https://example.com/sp#", "https://example.com/sp?#", "http://127.0.0.1:9#"]) {
      expect({ bad, refused: webhookUrlError(bad) }).toEqual({ bad, refused: "a webhook URL has no #fragment" });
      expect(webhookUrlError(bad, "stored")).toBeNull();
    }
    for (const bad of ["https://example.com/sp?", "http://127.0.0.1:9?"]) {
      expect({ bad, refused: webhookUrlError(bad) }).toEqual({ bad, refused: 'the URL\'s query is empty: write it without the "?"' });
      expect(webhookUrlError(bad, "stored")).toBeNull();
    }
    expect(webhookUrlError("https://example.com/sp#x", "stored")).toBe("a webhook URL has no #fragment");
    for (const ok of ["https://example.com/sp?a", "https://example.com/sp?=", "https://example.com/%3F"]) expect(webhookUrlError(ok)).toBeNull();
  });

  test("the shown form: the origin, and /… in place of any path or query; the same when shown again", () => {
    for (const [url, shown] of [
      ["http://127.0.0.1:43199/hook?token=sekret", "http://127.0.0.1:43199/…"],
      ["https://hooks.slack.com/services/T0/B0/XXXX", "https://hooks.slack.com/…"],
      ["https://hooks.example.com/?token=sekret", "https://hooks.example.com/…"],
      ["HTTP://Hooks.Example.com:80/", "http://hooks.example.com"],
      ["https://hooks.example.com", "https://hooks.example.com"],
      ["http://[::1]:8080/h", "http://[::1]:8080/…"],
      // Stored before such URLs were refused: read as URL() reads them.
      ["http:x/sekret", "http://x/…"],
      ["https://user:sekret@example.com/x", "https://example.com/…"],
      ["not a URL sekret", "…"],
      ["ftp://example.com/sekret", "…"],
    ] as const) {
      expect({ url, shown: shownWebhookUrl(url) }).toEqual({ url, shown });
      expect(shownWebhookUrl(shown)).toBe(shown);
    }
  });

  test("a refusal never quotes user info, even of text that is no URL", () => {
    expect(webhookUrlError("https://user:hunter2@[::1")).toBe('"https://***@[::1" is not a URL');
    for (const bad of ["https://user:hunter2@[::1", "http:user:hunter2@[::1", "//user:hunter2@[::1", "user:hunter2@[::1", "ftp://user:hunter2@[", "https://user:hun/ter2@[::1", "user:hunter2@host"]) {
      for (const as of ["new", "stored"] as const) {
        const refused = webhookUrlError(bad, as);
        expect({ bad, refused }).toEqual({ bad, refused: expect.any(String) });
        expect({ bad, refused }).not.toEqual({ bad, refused: expect.stringMatching(/user|hunter2|ter2/) });
      }
    }
  });
});

describe("key.expiring", () => {
  test("7 days before a key's expires_at, once per key and expiry; keys without one are skipped", async () => {
    const store = SqliteStore.open(":memory:");
    const hook = (await store.webhooks.createWebhook("http://127.0.0.1:9/x", ["key.expiring"])).webhook;
    const now = new Date("2026-11-25T00:00:00Z");
    const soon = new Date(now.getTime() + EXPIRING_NOTICE_MS).toISOString();
    const later = new Date(now.getTime() + EXPIRING_NOTICE_MS + 1).toISOString();
    const keys = [
      { id: "key_a", name: "a", plan: "free", revokedAt: null, expiresAt: soon },
      { id: "key_b", name: "b", plan: "free", revokedAt: null, expiresAt: later },
      { id: "key_c", name: "c", plan: "free", revokedAt: null },
      { id: "key_d", name: "d", plan: "free", revokedAt: "2026-11-01T00:00:00Z", expiresAt: soon },
      { id: "key_e", name: "e", plan: "free", revokedAt: null, expiresAt: "2026-11-24T00:00:00Z" },
    ];
    expect(await emitExpiringKeys(store, keys, now)).toBe(1);
    expect(await emitExpiringKeys(store, keys, now)).toBe(0);
    // A new expiry is told again.
    expect(await emitExpiringKeys(store, [{ ...keys[0]!, expiresAt: new Date(now.getTime() + 86_400_000).toISOString() }], now)).toBe(1);
    const [body] = (await store.webhooks.claimDeliveries({ limit: 10, nowMs: now.getTime(), leaseMs: 1 })).map((d) => JSON.parse(d.body));
    expect(body).toEqual({ type: "key.expiring", timestamp: now.toISOString(), data: { key: { id: "key_a", name: "a", plan: "free" }, expires_at: soon } });
    expect(await store.webhooks.listDeliveries(hook.id, 10)).toHaveLength(2);
    await store.close();
  });
});
