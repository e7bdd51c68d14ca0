import { describe, expect, test } from "bun:test";
import { DownloadAuth, expandTemplate, hasCredentials, redactSecrets, storedUrl } from "../../../src/importer/fetch/locations.ts";

describe("credentials in URLs", () => {
  test("redactSecrets hides user info of http(s) URLs, passwords of others, and secret query parameters", () => {
    expect(redactSecrets("https://123456:abcLICENSEkey@download.example/geoip?suffix=tar.gz: HTTP 500")).toBe("https://***@download.example/geoip?suffix=tar.gz: HTTP 500");
    expect(redactSecrets("https://TOKEN123@ipinfo.example/data/lite.mmdb")).toBe("https://***@ipinfo.example/data/lite.mmdb");
    expect(redactSecrets("https://ipinfo.example/data/lite.mmdb?token=TOKEN123 failed")).toBe("https://ipinfo.example/data/lite.mmdb?token=*** failed");
    expect(redactSecrets("x?edition_id=GeoLite2-City&license_key=KEY&suffix=tar.gz")).toBe("x?edition_id=GeoLite2-City&license_key=***&suffix=tar.gz");
    expect(redactSecrets("postgres://app:pw@db/iplookup")).toBe("postgres://app:***@db/iplookup");
    expect(redactSecrets("/var/lib/iplookup/data.db: no such file")).toBe("/var/lib/iplookup/data.db: no such file");
  });

  test("a secret query parameter is hidden whole, to the end of its value: / : @ ) and the like are part of it", () => {
    expect(redactSecrets("imported https://h.example/x.mmdb?token=abc/SECRETPART:more")).toBe("imported https://h.example/x.mmdb?token=***");
    expect(redactSecrets("https://h.example/x?token=ab@cd:ef&suffix=tar.gz")).toBe("https://h.example/x?token=***&suffix=tar.gz");
    expect(redactSecrets("https://h.example/x?license_key=a:b)c(d!e;f,g#part")).toBe("https://h.example/x?license_key=***#part");
    expect(redactSecrets("https://h.example/x?key=a/b\tnext\nhttps://h.example/y?secret=c@d")).toBe("https://h.example/x?key=***\tnext\nhttps://h.example/y?secret=***");
    expect(redactSecrets("https://h.example/x?api_key=SECRET*** end")).toBe("https://h.example/x?api_key=*** end");
    expect(redactSecrets("https://h.example/x?token=***SECRET")).toBe("https://h.example/x?token=***");
    // A user name may hold an @: the user info runs to the last one before the host.
    expect(redactSecrets("https://us@er:pw@h.example/x")).toBe("https://***@h.example/x");
    expect(redactSecrets("https://TO@KEN@h.example/x?q=a@b")).toBe("https://***@h.example/x?q=a@b");
    expect(redactSecrets("https://h.example/x?q=a@b: HTTP 404")).toBe("https://h.example/x?q=a@b: HTTP 404");
  });

  test("storedUrl keeps no credential, and keeps month placeholders readable", () => {
    expect(storedUrl("https://user:pw@download.example/geoip/databases/GeoLite2-City/download?suffix=tar.gz")).toBe(
      "https://download.example/geoip/databases/GeoLite2-City/download?suffix=tar.gz",
    );
    expect(storedUrl("https://ipinfo.example/data/ipinfo_lite.mmdb?token=SECRET")).toBe("https://ipinfo.example/data/ipinfo_lite.mmdb");
    expect(storedUrl("https://download.example/free/dbip-city-lite-{YYYY}-{MM}.mmdb.gz")).toBe("https://download.example/free/dbip-city-lite-{YYYY}-{MM}.mmdb.gz");
    expect(hasCredentials(new URL("https://a@b/c"))).toBe(true);
    expect(hasCredentials(new URL("https://b/c?token=x"))).toBe(true);
    expect(hasCredentials(new URL("https://b/c?suffix=tar.gz"))).toBe(false);
  });

  test("IPLOOKUP_DOWNLOAD_AUTH: one pair for every host, or a pair per host; a bad value never quotes itself", () => {
    const auth = DownloadAuth.parse("download.example=123:key ipinfo.example=TOKEN: fallback:pw");
    expect(auth.for(new URL("https://download.example/x"))).toEqual({ user: "123", password: "key" });
    expect(auth.for(new URL("https://IPINFO.example/x"))).toEqual({ user: "TOKEN", password: "" });
    expect(auth.for(new URL("https://elsewhere.example/x"))).toEqual({ user: "fallback", password: "pw" });
    expect(DownloadAuth.parse("host.example=a:b").for(new URL("https://other.example/"))).toBeUndefined();
    expect(DownloadAuth.parse(undefined).for(new URL("https://other.example/"))).toBeUndefined();
    expect(() => DownloadAuth.parse("justasecret")).toThrow(/^IPLOOKUP_DOWNLOAD_AUTH: each entry must be USER:PASSWORD or HOST=USER:PASSWORD$/);
  });
});

test("month placeholders: this month, or the one before (UTC)", () => {
  const now = new Date("2026-01-01T00:30:00Z");
  expect(expandTemplate("https://x/dbip-city-lite-{YYYY}-{MM}.mmdb.gz", now)).toBe("https://x/dbip-city-lite-2026-01.mmdb.gz");
  expect(expandTemplate("https://x/dbip-city-lite-{YYYY}-{MM}.mmdb.gz", now, 1)).toBe("https://x/dbip-city-lite-2025-12.mmdb.gz");
});

test("redacting twice changes nothing more", () => {
  // A message names a location with its credentials hidden already (displayLocation), and is redacted again as it is printed.
  const once = `source 1 (${redactSecrets("https://user:pw@host.example/x.mmdb?token=abc-DEF_1.2~3%2B/x:y")}): HTTP 404 Not Found`;
  expect(once).toBe("source 1 (https://***@host.example/x.mmdb?token=***): HTTP 404 Not Found");
  expect(redactSecrets(once)).toBe(once);
  expect(redactSecrets(`${once}, '${redactSecrets("https://h.example/y?key=a:b")}'; checksum (from https://h.example/y.sha256?token=***).`)).toBe(
    `${once}, 'https://h.example/y?key=***'; checksum (from https://h.example/y.sha256?token=***).`,
  );
  // Text with a secret in it still is hidden whole, the punctuation after it too.
  expect(redactSecrets("source 1 (https://host.example/x.mmdb?token=abc:def): HTTP 404")).toBe("source 1 (https://host.example/x.mmdb?token=*** HTTP 404");
  // A checksum's place appends .sha256 to the query: shown after the hidden secret, it stays in sight.
  const probed = "its checksum could not be looked for at https://h.example/y.csv?token=***.sha256: HTTP 500";
  expect(redactSecrets(probed)).toBe(probed);
  expect(redactSecrets("https://h.example/y.csv?token=abc.sha256")).toBe("https://h.example/y.csv?token=***");
});
