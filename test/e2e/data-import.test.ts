import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { cli } from "../support/server-process.ts";
import { startSocketServer } from "../support/in-process-server.ts";
import { writeMmdb } from "../support/mmdb-writer.ts";
import { NO_SIGNAL_SOURCE } from "../support/privacy.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-data-import-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Two small sources whose boundaries differ: city rows cover half of 8.8.8.0/24, the
// ASN rows the whole /24; "Not routed" iptoasn rows add nothing.
const CITY_CSV = [
  "1.0.0.0,1.0.0.255,AU,Queensland,,Brisbane,4000,-27.4679,153.0281,Australia/Brisbane",
  "8.8.8.0,8.8.8.127,US,California,,Mountain View,94043,37.4056,-122.0775,America/Los_Angeles",
  '2606:4700::,2606:4700::ffff,US,California,,"San Francisco, CA",94107,37.7749,-122.4194,America/Los_Angeles',
].join("\n");
const ASN_TSV = [
  "1.0.0.0\t1.0.0.255\t13335\tUS\tCLOUDFLARENET",
  "8.8.8.0\t8.8.8.255\t15169\tUS\tGOOGLE",
  "9.9.9.0\t9.9.9.255\t0\tNone\tNot routed",
  "2606:4700::\t2606:4700:ffff:ffff:ffff:ffff:ffff:ffff\t13335\tUS\tCLOUDFLARENET",
].join("\n");

const cityCsv = join(dir, "city.csv");
const asnTsv = join(dir, "ip2asn-combined.tsv");
writeFileSync(cityCsv, CITY_CSV);
writeFileSync(asnTsv, ASN_TSV);

function lookup(path: string, text: string) {
  const index = RangeIndex.open(path);
  const hit = index.lookup(parseAddress(text)!);
  return hit && { network: hit.network, ...hit.record };
}

describe("data import", () => {
  test("city fields, precedence by order, network where the sources' boundaries differ", () => {
    const path = join(dir, "city-first.db");
    const result = cli(["data", "import", "--data", path, "--name", "Test city", "--license", "CC0", "--attribution", "made by the test", cityCsv, asnTsv]);
    expect(result.stderr).toContain("merged:");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("1. Test city (city-csv)");
    expect(lookup(path, "1.0.0.1")).toEqual({
      network: "1.0.0.0/24",
      asn: 13335,
      as_name: "CLOUDFLARENET",
      country_code: "AU",
      country: "Australia",
      city: "Brisbane",
      region: "Queensland",
      postal_code: "4000",
      latitude: -27.4679,
      longitude: 153.0281,
      time_zone: "Australia/Brisbane",
      privacy: NO_SIGNAL_SOURCE,
    });
    expect(lookup(path, "8.8.8.8")).toMatchObject({ network: "8.8.8.0/25", asn: 15169, city: "Mountain View" });
    expect(lookup(path, "8.8.8.200")).toEqual({
      network: "8.8.8.128/25",
      asn: 15169,
      as_name: "GOOGLE",
      country_code: "US",
      country: "United States",
      city: null,
      region: null,
      postal_code: null,
      latitude: null,
      longitude: null,
      time_zone: null,
      privacy: NO_SIGNAL_SOURCE,
    });
    expect(lookup(path, "9.9.9.9")).toBeNull();
    expect(lookup(path, "2606:4700::1")).toMatchObject({ network: "2606:4700::/112", city: "San Francisco, CA", asn: 13335 });
    expect(lookup(path, "2606:4700::1:0")).toMatchObject({ network: "2606:4700::1:0/112", city: null, asn: 13335 });

    const info = JSON.parse(cli(["data", "info", "--json", "--data", path]).stdout);
    expect(info.fields).toEqual(["asn", "as_name", "country_code", "country", "city", "region", "postal_code", "latitude", "longitude", "time_zone", "privacy"]);
    expect(info.data_version).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{8}$/);
    expect(info.sources).toMatchObject([
      { name: "Test city", format: "city-csv", license: "CC0", attribution: "made by the test", rows_v4: 2, rows_v6: 1, ranges_v4: 2, ranges_v6: 1 },
      { name: "ip2asn-combined.tsv", format: "iptoasn-tsv", license: "not stated", rows_v4: 2, rows_v6: 1, fields: ["asn", "as_name", "country_code"] },
    ]);
    const text = cli(["data", "info", "--data", path]).stdout;
    expect(text).toContain("1. Test city");
    expect(text).toContain("attribution: made by the test");
    expect(text).toContain("2. ip2asn-combined.tsv");
  });

  test("the other order: the ASN file's country wins", () => {
    const path = join(dir, "asn-first.db");
    expect(cli(["data", "import", "--data", path, asnTsv, cityCsv]).code).toBe(0);
    expect(lookup(path, "1.0.0.1")).toMatchObject({ country_code: "US", city: "Brisbane", asn: 13335 });
  });

  test("a running server picks up a new import without a restart, and names the data version", async () => {
    const path = join(dir, "live.db");
    expect(cli(["data", "import", "--data", path, cityCsv, asnTsv]).code).toBe(0);
    const server = await startSocketServer({ data: path });
    try {
      const key = JSON.parse(cli(["keys", "create", "--name", "import", "--json"], { IPLOOKUP_STATE: server.statePath }).stdout).key;
      const ask = (ip: string) =>
        fetch(`${server.url}/v1/lookup`, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ ip }) });
      let first = await ask("1.0.0.1");
      // The server sees a new key within its key poll interval.
      for (let i = 0; i < 40 && first.status === 401; i++) {
        await Bun.sleep(50);
        first = await ask("1.0.0.1");
      }
      const firstVersion = first.headers.get("x-data-version");
      expect(firstVersion).toBe(JSON.parse(cli(["data", "info", "--json", "--data", path]).stdout).data_version);
      expect(await first.json()).toMatchObject({ ip: "1.0.0.1", found: true, country_code: "AU", city: "Brisbane" });
      const missing = await ask("9.9.9.9");
      expect(await missing.json()).toMatchObject({ found: false, network: null, city: null, latitude: null, time_zone: null });

      expect(cli(["data", "import", "--data", path, asnTsv, cityCsv]).code).toBe(0);
      let body: Record<string, unknown> = {};
      let version: string | null = firstVersion;
      for (let i = 0; i < 50 && version === firstVersion; i++) {
        await Bun.sleep(100);
        const response = await ask("1.0.0.1");
        version = response.headers.get("x-data-version");
        body = (await response.json()) as Record<string, unknown>;
      }
      expect(version).not.toBe(firstVersion);
      expect(body).toMatchObject({ country_code: "US", city: "Brisbane" });
      const batch = await fetch(`${server.url}/v1/lookup/batch`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ ips: ["8.8.8.8"] }),
      });
      expect(batch.headers.get("x-data-version")).toBe(version);
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toMatch(/^iplookup_data_age_seconds \d+$/m);
      expect(metrics).toContain(`data_version="${version}"`);
    } finally {
      await server.close();
    }
  });

  test("bad files stop the import, say why, and leave the installed data alone", () => {
    const sub = join(dir, "bad");
    mkdirSync(sub);
    const path = join(sub, "installed.db");
    expect(cli(["data", "import", "--data", path, cityCsv]).code).toBe(0);
    const before = readFileSync(path);
    const mmdb = readFileSync(join(import.meta.dir, "../../node_modules/@ip-location-db/geo-whois-asn-country-mmdb/geo-whois-asn-country.mmdb"));
    const truncated = join(sub, "truncated.mmdb");
    writeFileSync(truncated, mmdb.subarray(0, Math.floor(mmdb.byteLength / 2)));
    // A layout iplookup does not map: every address would be found with every field null.
    const anonymous = join(sub, "anonymous.mmdb");
    writeFileSync(anonymous, writeMmdb({ ipVersion: 6, databaseType: "GeoIP2-Anonymous-IP", networks: [{ network: "1.0.0.0/24", value: { is_anonymous: true, is_tor_exit_node: true } }] }).bytes);
    const damagedCsv = join(sub, "damaged.csv");
    writeFileSync(damagedCsv, `${CITY_CSV.split("\n")[0]}\n1.0.1.0,1.0.0.255,AU,,,,,,,\n`);
    const cases: Array<[string[], number, RegExp]> = [
      [["--format", "mmdb", truncated], 1, /truncated\.mmdb/],
      [[truncated], 1, /truncated\.mmdb/],
      [[damagedCsv], 1, /damaged\.csv:2/],
      [[cityCsv, anonymous], 1, /anonymous\.mmdb: its records \(database type "GeoIP2-Anonymous-IP"\) hold none of the keys iplookup reads: autonomous_system_number .*; refused/],
      [[cityCsv, damagedCsv], 1, /damaged\.csv:2/],
      [[join(sub, "missing.csv")], 2, /missing\.csv: no such file/],
      [["--format", "xml", cityCsv], 2, /--format must be one of/],
      [[cityCsv, "--license", "CC0"], 2, /must come before the FILE/],
      [[], 2, /at least one FILE/],
    ];
    for (const [args, code, message] of cases) {
      const result = cli(["data", "import", "--data", path, ...args]);
      expect({ args, code: result.code }).toEqual({ args, code });
      expect(result.stderr).toMatch(message);
      expect(readFileSync(path).equals(before)).toBe(true);
      expect(readdirSync(sub).filter((name) => name.endsWith(".tmp"))).toEqual([]);
    }
  });

  test("an import under umask 077 installs the file with the mode of the one it replaces, so a server running as another user still reads it", () => {
    const sub = join(dir, "mode");
    mkdirSync(sub);
    const path = join(sub, "d3.db");
    expect(cli(["data", "import", "--data", path, cityCsv]).code).toBe(0);
    chmodSync(path, 0o644);
    const strict = ["sh", "-c", 'umask 077 && exec "$@"', "sh", process.execPath, join(import.meta.dir, "..", "..", "src", "main.ts")];
    expect(cli(["data", "import", "--data", path, asnTsv], {}, strict).code).toBe(0);
    expect((statSync(path).mode & 0o7777).toString(8)).toBe("644");
    // A new file: as before, what the umask leaves.
    const fresh = join(sub, "fresh.db");
    expect(cli(["data", "import", "--data", fresh, asnTsv], {}, strict).code).toBe(0);
    expect((statSync(fresh).mode & 0o7777).toString(8)).toBe("600");
  });

  // chown to another user needs root; as another user the file stays its own (EPERM ignored).
  const asRoot = process.getuid?.() === 0;
  if (!asRoot) console.warn("skipped: the installed file keeps the replaced file's owner and group (a test for root only)");
  test.skipIf(!asRoot)("as root, the installed file keeps the owner and group of the one it replaces (root only)", () => {
    const sub = join(dir, "owner");
    mkdirSync(sub);
    const path = join(sub, "d3.db");
    expect(cli(["data", "import", "--data", path, cityCsv]).code).toBe(0);
    chownSync(path, 61235, 61236);
    expect(cli(["data", "import", "--data", path, asnTsv]).code).toBe(0);
    expect(statSync(path)).toMatchObject({ uid: 61235, gid: 61236 });
  });

  test("the binary's embedded data cannot be the target", () => {
    const result = cli(["data", "import", cityCsv], { IPLOOKUP_DATA: "/$bunfs/root/iplookup-data.db" });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("cannot be replaced");
  });
});
