import { expect, test } from "bun:test";
import { accessLine, durationText, type AccessEntry } from "../../src/log/access-line.ts";

const entry: AccessEntry = {
  requestId: "3f2a9c1e-1b",
  method: "POST",
  route: "/v1/lookup",
  status: 200,
  keyId: "key_abcdefghijklmnop",
  units: 1,
  durationMs: 0.42,
  peer: "2001:db8::1",
};

function asJson(time: string, e: AccessEntry): string {
  return JSON.stringify({
    time,
    level: "info",
    msg: "request",
    request_id: e.requestId,
    method: e.method,
    route: e.route,
    status: e.status,
    key_id: e.keyId,
    units: e.units,
    duration_ms: e.durationMs,
    peer: e.peer,
    client: e.client,
  });
}

test("an access line is the JSON of its entry, byte for byte", () => {
  const time = "2026-11-23T06:00:00.123Z";
  for (const e of [
    entry,
    { ...entry, keyId: null, peer: null, status: 401, units: 0 },
    { ...entry, method: "HEAD", route: "other", durationMs: 12 },
    // An unusual method is escaped as JSON asks.
    { ...entry, method: 'BR"EW\\' },
    // Behind trusted proxies, the client beside the peer.
    { ...entry, peer: "10.0.0.2", client: "203.0.113.7" },
    { ...entry, peer: null, client: null },
  ]) {
    expect(accessLine(time, e)).toBe(asJson(time, e));
    JSON.parse(accessLine(time, e));
  }
});

test("every duration is written as JSON writes it, whether its text is kept or not", () => {
  const durations = [0, 0.01, 0.1, 0.42, 1, 9.99, 12, 99.99, 100, 1234.56, 0.005, 0.125, 1e-7, 5e21];
  for (let hundredths = 0; hundredths < 12_000; hundredths += 7) durations.push(Math.round(hundredths) / 100);
  for (const ms of durations) {
    expect(durationText(ms)).toBe(JSON.stringify(ms));
    // A second time, from the kept text.
    expect(durationText(ms)).toBe(JSON.stringify(ms));
  }
});
