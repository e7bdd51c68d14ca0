import { describe, expect, test } from "bun:test";
import {
  ControlValueError,
  MAX_GRACE_MS,
  controlsFromJson,
  parseCidrList,
  parseExpiresAt,
  parseGrace,
  parseMetadata,
  parseOriginList,
} from "../../src/access/key-control-values.ts";

const NOW = Date.parse("2026-11-15T12:00:00Z");

describe("the values of a key's controls", () => {
  test("expires_at: RFC 3339 with an offset, written as UTC; the past and the present refused", () => {
    expect(parseExpiresAt("2027-01-01T01:00:00+01:00", NOW)).toBe("2027-01-01T00:00:00.000Z");
    expect(parseExpiresAt("2026-11-15t12:00:00.001z", NOW)).toBe("2026-11-15T12:00:00.001Z");
    for (const bad of ["2027-01-01", "2027-01-01T00:00:00", "tomorrow", "2027-13-01T00:00:00Z", "1795000000", ""]) {
      expect(() => parseExpiresAt(bad, NOW)).toThrow(ControlValueError);
    }
    expect(() => parseExpiresAt("2026-11-15T12:00:00Z", NOW)).toThrow("not in the future");
  });

  test("expires_at: a time that does not exist is refused, not carried over to the next day or month", () => {
    for (const bad of [
      "2030-02-30T00:00:00Z",
      "2030-02-29T00:00:00Z",
      "2030-04-31T00:00:00Z",
      "2030-00-10T00:00:00Z",
      "2030-01-00T00:00:00Z",
      "2030-01-01T24:00:00Z",
      "2030-01-01T23:60:00Z",
      "2030-01-01T23:59:60Z",
      "2030-01-01T00:00:00+24:00",
      "2030-01-01T00:00:00+01:60",
    ]) {
      expect(() => parseExpiresAt(bad, NOW)).toThrow(`"${bad}" is not an RFC 3339 time`);
    }
    expect(parseExpiresAt("2028-02-29T23:59:59Z", NOW)).toBe("2028-02-29T23:59:59.000Z");
    expect(parseExpiresAt("2030-12-31T23:59:59.999-23:59", NOW)).toBe("2031-01-01T23:58:59.999Z");
  });

  test("allowed_cidrs: blocks and single addresses, host bits cleared, IPv4-mapped read as IPv4, each once", () => {
    expect(parseCidrList(["203.0.113.77/24", "10.1.2.3", "2001:DB8:0:0:1::/32", "::ffff:192.0.2.0/120", "203.0.113.0/24", " 0.0.0.0/0 "])).toEqual([
      "203.0.113.0/24",
      "10.1.2.3/32",
      "2001:db8::/32",
      "192.0.2.0/24",
      "0.0.0.0/0",
    ]);
    expect(parseCidrList(["2001:db8:ffff:ffff::1/33"])).toEqual(["2001:db8:8000::/33"]);
    for (const bad of ["10.0.0.0/33", "10.0.0.0/08", "example.com", "10.0.0", "[::1]", "10.0.0.0/-1", "fe80::1%eth0"]) expect(() => parseCidrList([bad])).toThrow(ControlValueError);
    expect(() => parseCidrList(Array.from({ length: 101 }, () => "10.0.0.1"))).toThrow("at most 100");
  });

  test("allowed_origins: as a browser sends them (lower-case host, default port dropped), nothing after the port", () => {
    expect(parseOriginList(["https://App.Example.com/", "http://localhost:5173", "https://x.example:443", "http://x.example:8080"])).toEqual([
      "https://app.example.com",
      "http://localhost:5173",
      "https://x.example",
      "http://x.example:8080",
    ]);
    for (const bad of ["app.example.com", "https://app.example.com/path", "ftp://x.example", "https://user@x.example", "null", "*", "https://x.example?q", "https://"]) {
      expect(() => parseOriginList([bad])).toThrow(ControlValueError);
    }
  });

  test("metadata: a JSON object of at most 1 KiB (UTF-8 bytes of compact JSON)", () => {
    expect(parseMetadata({ team: "maps" })).toEqual({ team: "maps" });
    const fits = { k: "x".repeat(1024 - '{"k":""}'.length) };
    expect(parseMetadata(fits)).toBe(fits);
    expect(() => parseMetadata({ k: `${"x".repeat(1024 - '{"k":""}'.length - 1)}é` })).toThrow("at most 1024");
    for (const bad of [[1], "text", 5, null]) expect(() => parseMetadata(bad)).toThrow(ControlValueError);
  });

  test("metadata: a number JSON cannot keep (1e400 reads as Infinity, written as null) is refused, naming where", () => {
    expect(() => parseMetadata(JSON.parse('{"limits":{"max":1e400}}'))).toThrow("metadata/limits/max: a number too large to keep (it would read null)");
    expect(() => parseMetadata({ tags: [1, -Infinity] })).toThrow("metadata/tags/1: a number too large to keep");
    expect(parseMetadata({ max: 1.7976931348623157e308 })).toEqual({ max: 1.7976931348623157e308 });
  });

  test("grace: durations up to 30 days; 0 for none", () => {
    expect(parseGrace("24h")).toBe(86_400_000);
    expect(parseGrace("1h30m")).toBe(5_400_000);
    expect(parseGrace("0s")).toBe(0);
    expect(parseGrace("0")).toBe(0);
    expect(parseGrace("30d")).toBe(MAX_GRACE_MS);
    for (const bad of ["31d", "24", "1w", "-1h", "", "24 h"]) expect(() => parseGrace(bad)).toThrow(ControlValueError);
  });

  test("controlsFromJson: left out is no change; null, an empty list or object clears", () => {
    expect(controlsFromJson({}, NOW)).toEqual({});
    expect(controlsFromJson({ expires_at: null, allowed_cidrs: [], allowed_origins: null, metadata: {} }, NOW)).toEqual({ expiresAt: null, allowedCidrs: null, allowedOrigins: null, metadata: null });
    expect(controlsFromJson({ allowed_cidrs: ["10.0.0.1/8"] }, NOW)).toEqual({ allowedCidrs: ["10.0.0.0/8"] });
  });
});
