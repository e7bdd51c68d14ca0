import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAddress } from "../../src/address/parse.ts";
import { RangeIndex } from "../../src/index/range-index.ts";
import { dbipCountryMmdb, geoLite2AsnMmdb, gzip, ipinfoLiteMmdb, iptoasnTsv, maxmindTarGz, sha256File } from "../support/download-fixtures.ts";
import { cliAsync as cli, startPublisher, startTruncatingServer } from "../support/publisher.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-data-update-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const LICENCE_KEY = "s3cretLicenceKey";
const TOKEN = "tok3nSecret";
const AUTH = { IPLOOKUP_DOWNLOAD_AUTH: `127.0.0.1=123456:${LICENCE_KEY}` };
const month = new Date().toISOString().slice(0, 7); // YYYY-MM, UTC, as the importer fills {YYYY}-{MM}

// MaxMind's download URL and its checksum beside it (the suffix is in the query).
const GEOLITE = "/geoip/databases/GeoLite2-ASN/download";
async function publishGeoLite(asn: number, date: string, checksum?: string) {
  const bytes = await maxmindTarGz("GeoLite2-ASN", date, geoLite2AsnMmdb(asn));
  const filename = `GeoLite2-ASN_${date}.tar.gz`;
  publisher.publish(`${GEOLITE}?suffix=tar.gz`, { body: bytes, auth: `123456:${LICENCE_KEY}`, filename });
  publisher.publish(`${GEOLITE}?suffix=tar.gz.sha256`, { body: checksum ?? sha256File(bytes, filename), auth: `123456:${LICENCE_KEY}` });
}
const publishDbip = (country: string) => publisher.publish(`/free/dbip-country-lite-${month}.mmdb.gz`, { body: gzip(dbipCountryMmdb(country)) });
const publishIptoasn = (asn: number) => publisher.publish("/data/ip2asn-combined.tsv.gz", { body: gzip(iptoasnTsv(asn)) });

/** The import every test starts from: GeoLite2 ASN first, then DB-IP country, then iptoasn. */
async function importAll(path: string) {
  await publishGeoLite(13335, "20261120");
  publishDbip("AU");
  publishIptoasn(13335);
  return await cli(
    [
      "data",
      "import",
      "--data",
      path,
      `${publisher.url}${GEOLITE}?suffix=tar.gz`,
      `${publisher.url}/free/dbip-country-lite-{YYYY}-{MM}.mmdb.gz`,
      "--license",
      "PDDL 1.0",
      "--attribution",
      "IP to ASN data by iptoasn.com",
      `${publisher.url}/data/ip2asn-combined.tsv.gz`,
    ],
    AUTH,
  );
}

function lookup(path: string, ip: string) {
  const hit = RangeIndex.open(path).lookup(parseAddress(ip)!);
  return hit && { network: hit.network, ...hit.record };
}

/** What identifies an installed file: a new file renamed into place has another inode. */
function identity(path: string) {
  const stat = statSync(path);
  return { ino: stat.ino, mtimeMs: stat.mtimeMs, bytes: readFileSync(path) };
}

describe("data import from URLs", () => {
  test("MaxMind's tar.gz with its .sha256 behind Basic auth, DB-IP's monthly .mmdb.gz, iptoasn's .tsv.gz: imported, recorded, no credential anywhere", async () => {
    const path = join(dir, "urls.db");
    const imported = await importAll(path);
    expect(imported.stderr).toContain("unpacked");
    expect(imported.code).toBe(0);
    expect(lookup(path, "1.0.0.1")).toMatchObject({ asn: 13335, as_name: "CLOUDFLARENET", country_code: "AU" });
    expect(lookup(path, "8.8.8.8")).toMatchObject({ asn: 15169, country_code: "US" });
    // The checksum beside the download was asked for, with the same credentials.
    expect(publisher.requests.some((r) => r.path === `${GEOLITE}?suffix=tar.gz.sha256` && r.headers.authorization !== undefined)).toBe(true);

    const info = JSON.parse((await cli(["data", "info", "--json", "--data", path])).stdout);
    expect(info.sources.map((s: { name: string; license: string }) => [s.name, s.license])).toEqual([
      ["GeoLite2-ASN", "GeoLite2 End User License Agreement"],
      ["DBIP-Country-Lite", "CC BY 4.0"],
      ["ip2asn-combined.tsv", "PDDL 1.0"],
    ]);
    const [geolite, dbip, iptoasn] = info.recipe.sources;
    expect(geolite.files[0]).toMatchObject({
      location: `${publisher.url}${GEOLITE}?suffix=tar.gz`,
      credentials: true,
      members: ["GeoLite2-ASN_20261120/GeoLite2-ASN.mmdb"],
      fetched: { url: `${publisher.url}${GEOLITE}?suffix=tar.gz`, etag: expect.stringMatching(/^"/), last_modified: expect.any(String), sha256: expect.stringMatching(/^[0-9a-f]{64}$/) },
    });
    expect(dbip.files[0]).toMatchObject({ location: `${publisher.url}/free/dbip-country-lite-{YYYY}-{MM}.mmdb.gz`, fetched: { url: `${publisher.url}/free/dbip-country-lite-${month}.mmdb.gz` } });
    expect(iptoasn.describe).toEqual({ license: "PDDL 1.0", attribution: "IP to ASN data by iptoasn.com" });
    const text = (await cli(["data", "info", "--data", path])).stdout;
    expect(text).toContain(`1. ${publisher.url}${GEOLITE}?suffix=tar.gz (with credentials: IPLOOKUP_DOWNLOAD_AUTH)`);
    expect(text).toContain("options:       --license \"PDDL 1.0\"");

    for (const shown of [imported.stdout, imported.stderr, text, JSON.stringify(info), readFileSync(path).toString("latin1")]) {
      expect(shown).not.toContain(LICENCE_KEY);
    }
    // Nothing of the downloads is left beside the data file.
    expect(readdirSync(dir).filter((name) => name.startsWith(".urls.db"))).toEqual([]);
  });

  test("a failed URL import never shows the password or the token, and names the reason", async () => {
    const path = join(dir, "failed.db");
    const withPassword = await cli(["data", "import", "--data", path, `http://123456:${LICENCE_KEY}@127.0.0.1:${new URL(publisher.url).port}/missing.mmdb`]);
    expect(withPassword.code).toBe(1);
    expect(withPassword.stderr).toContain(`iplookup: source 1 (http://***@127.0.0.1:${new URL(publisher.url).port}/missing.mmdb): HTTP 404 Not Found`);
    const withToken = await cli(["data", "import", "--data", path, `${publisher.url}/data/ipinfo_lite.mmdb?token=${TOKEN}`]);
    expect(withToken.code).toBe(1);
    expect(withToken.stderr).toContain("/data/ipinfo_lite.mmdb?token=***): HTTP 404 Not Found");
    const typo = await cli(["data", "import", "--data", path, `ipinfo.example/data/ipinfo_lite.mmdb?token=${TOKEN}`]);
    expect(typo.code).toBe(2);
    for (const result of [withPassword, withToken, typo]) expect(result.stdout + result.stderr).not.toMatch(new RegExp(`${LICENCE_KEY}|${TOKEN}`));
    expect(readdirSync(dir).filter((name) => name.startsWith("failed.db") || name.startsWith(".failed.db"))).toEqual([]);
  });

  test("--sha256 HEX or URL before a source: a mismatch refuses the import, and later updates", async () => {
    publishIptoasn(13335);
    const path = join(dir, "sha.db");
    const wrong = await cli(["data", "import", "--data", path, "--sha256", "0".repeat(64), `${publisher.url}/data/ip2asn-combined.tsv.gz`]);
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/source 1 \(http:\/\/127\.0\.0\.1:\d+\/data\/ip2asn-combined\.tsv\.gz\): its SHA-256 is [0-9a-f]{64}, but --sha256 says 0{64}: refused/);
    const right = new Bun.CryptoHasher("sha256").update(gzip(iptoasnTsv(13335))).digest("hex");
    expect((await cli(["data", "import", "--data", path, "--sha256", right, `${publisher.url}/data/ip2asn-combined.tsv.gz`])).code).toBe(0);
    expect((await cli(["data", "import", "--data", path, "--sha256", "nothex", `${publisher.url}/data/ip2asn-combined.tsv.gz`])).code).toBe(2);
    // A checksum file's URL: the line naming the download counts.
    publisher.publish("/sums/SHA256SUMS", { body: `${"1".repeat(64)}  other.tsv.gz
${right}  ip2asn-combined.tsv.gz
` });
    const fromUrl = await cli(["data", "import", "--data", path, "--sha256", `${publisher.url}/sums/SHA256SUMS`, `${publisher.url}/data/ip2asn-combined.tsv.gz`]);
    expect(fromUrl.code).toBe(0);
    expect(JSON.parse((await cli(["data", "info", "--json", "--data", path])).stdout).recipe.sources[0].files[0].sha256).toBe(`${publisher.url}/sums/SHA256SUMS`);
    publisher.publish("/sums/SHA256SUMS", { body: `${"1".repeat(64)}  ip2asn-combined.tsv.gz
` });
    expect((await cli(["data", "update", "--data", path])).stdout).toStartWith("No source");
    publishIptoasn(64500);
    const mismatch = await cli(["data", "update", "--data", path]);
    expect(mismatch.code).toBe(1);
    expect(mismatch.stderr).toMatch(/its SHA-256 is [0-9a-f]{64}, but --sha256 says 1{64}: refused/);
  });
});

describe("data update", () => {
  test("nothing changed: conditional requests, exit 0, the file left exactly as it was", async () => {
    const path = join(dir, "unchanged.db");
    expect((await importAll(path)).code).toBe(0);
    const before = identity(path);
    const asked = publisher.requests.length;
    const result = await cli(["data", "update", "--data", path], AUTH);
    expect(result.stdout).toBe(`No source of ${path} changed (3 checked); the file is left as it was.\n`);
    expect(result.code).toBe(0);
    expect(identity(path)).toEqual(before);
    const requests = publisher.requests.slice(asked);
    expect(requests.map((r) => r.path)).toEqual([`${GEOLITE}?suffix=tar.gz`, `/free/dbip-country-lite-${month}.mmdb.gz`, "/data/ip2asn-combined.tsv.gz"]);
    for (const request of requests) expect(request.headers["if-none-match"]).toMatch(/^"/);
    expect(requests[0]?.headers["if-modified-since"]).toBeDefined();
    const json = JSON.parse((await cli(["data", "update", "--json", "--data", path], AUTH)).stdout);
    expect(json).toEqual({ changed: false, path, checked: 3 });
  });

  test("one source changed: the file is built again and installed, the others fetched whole", async () => {
    const path = join(dir, "changed.db");
    expect((await importAll(path)).code).toBe(0);
    const before = identity(path);
    await publishGeoLite(64500, "20261124");
    const result = await cli(["data", "update", "--data", path], AUTH);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^Updated .*changed\.db .*; data version \d{8}T\d{6}Z-[0-9a-f]{8}\.\nChanged:\n {2}source 1 \(http:\/\/127\.0\.0\.1:\d+\/geoip\/databases\/GeoLite2-ASN\/download\?suffix=tar\.gz\): SHA-256 /);
    expect(statSync(path).ino).not.toBe(before.ino);
    expect(lookup(path, "1.0.0.1")).toMatchObject({ asn: 64500, country_code: "AU" });
    const recipe = JSON.parse((await cli(["data", "info", "--json", "--data", path])).stdout).recipe;
    expect(recipe.sources[0].files[0].members).toEqual(["GeoLite2-ASN_20261124/GeoLite2-ASN.mmdb"]);
    // And the next update finds nothing new.
    expect((await cli(["data", "update", "--data", path], AUTH)).stdout).toStartWith("No source");
  });

  test("failures (HTTP 500, a wrong published checksum, a download cut short, a file that cannot be read, no credentials) leave the file as it was and exit 1 naming the source", async () => {
    const path = join(dir, "failing.db");
    expect((await importAll(path)).code).toBe(0);
    const before = identity(path);
    const update = () => cli(["data", "update", "--data", path], AUTH);
    const port = new URL(publisher.url).port;

    publisher.publish(`/free/dbip-country-lite-${month}.mmdb.gz`, { body: "", status: 500 });
    let result = await update();
    expect(result.stderr).toContain(`iplookup: data update failed: source 2 (http://127.0.0.1:${port}/free/dbip-country-lite-{YYYY}-{MM}.mmdb.gz): HTTP 500 Internal Server Error; ${path} is left as it was`);
    expect(result.code).toBe(1);
    expect(identity(path)).toEqual(before);
    publishDbip("AU");

    await publishGeoLite(64501, "20261127", `${"0".repeat(64)}  GeoLite2-ASN_20261127.tar.gz\n`);
    result = await update();
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/source 1 \(.*\?suffix=tar\.gz\): its SHA-256 is [0-9a-f]{64}, but .*\?suffix=tar\.gz\.sha256 says 0{64}: refused/);
    expect(identity(path)).toEqual(before);
    await publishGeoLite(13335, "20261120");

    const cut = startTruncatingServer(200_000, 1000);
    try {
      publisher.publish("/data/ip2asn-combined.tsv.gz", { body: "", redirect: `${cut.url}/ip2asn-combined.tsv.gz` });
      result = await update();
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/source 3 \(.*\/data\/ip2asn-combined\.tsv\.gz\): the download was cut short/);
      expect(identity(path)).toEqual(before);
    } finally {
      cut.stop();
    }

    publisher.publish("/data/ip2asn-combined.tsv.gz", { body: gzip("this is not\ta data file at all\n") });
    result = await update();
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`http://127.0.0.1:${port}/data/ip2asn-combined.tsv.gz: cannot tell the format`);
    expect(identity(path)).toEqual(before);
    publishIptoasn(13335);

    result = await cli(["data", "update", "--data", path], { IPLOOKUP_DOWNLOAD_AUTH: "" });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("source 1 (");
    expect(result.stderr).toContain("it was downloaded with credentials, which iplookup does not keep: set IPLOOKUP_DOWNLOAD_AUTH");
    expect(identity(path)).toEqual(before);
    expect(readdirSync(dir).filter((name) => name.startsWith(".failing.db") || name.startsWith("failing.db."))).toEqual([]);
    expect((await update()).code).toBe(0);
  });

  test("IPinfo's token in the query: kept out of the recipe, put back from IPLOOKUP_DOWNLOAD_AUTH by data update", async () => {
    publisher.publish(`/data/ipinfo_lite.mmdb?token=${TOKEN}`, { body: ipinfoLiteMmdb(13335) });
    const path = join(dir, "ipinfo.db");
    const imported = await cli(["data", "import", "--data", path, `${publisher.url}/data/ipinfo_lite.mmdb?token=${TOKEN}`]);
    expect(imported.code).toBe(0);
    expect(lookup(path, "1.0.0.1")).toMatchObject({ asn: 13335, country_code: "AU" });
    const info = JSON.parse((await cli(["data", "info", "--json", "--data", path])).stdout);
    expect(info.sources[0].license).toBe("CC BY-SA 4.0");
    expect(info.recipe.sources[0].files[0]).toMatchObject({ location: `${publisher.url}/data/ipinfo_lite.mmdb`, credentials: true, secret_params: ["token"] });
    expect(readFileSync(path).toString("latin1")).not.toContain(TOKEN);

    const without = await cli(["data", "update", "--data", path], { IPLOOKUP_DOWNLOAD_AUTH: "" });
    expect(without.code).toBe(1);
    expect(without.stderr).toContain("set IPLOOKUP_DOWNLOAD_AUTH");
    const withToken = await cli(["data", "update", "--data", path], { IPLOOKUP_DOWNLOAD_AUTH: `127.0.0.1=${TOKEN}:` });
    expect(withToken.stdout).toStartWith("No source");
    publisher.publish(`/data/ipinfo_lite.mmdb?token=${TOKEN}`, { body: ipinfoLiteMmdb(64500) });
    const changed = await cli(["data", "update", "--data", path], { IPLOOKUP_DOWNLOAD_AUTH: `127.0.0.1=${TOKEN}:` });
    expect(changed.code).toBe(0);
    expect(lookup(path, "1.0.0.1")).toMatchObject({ asn: 64500 });
    for (const result of [imported, without, withToken, changed]) expect(result.stdout + result.stderr).not.toContain(TOKEN);
  });

  test("DB-IP's month not published yet: last month's file is used", async () => {
    const path = join(dir, "month.db");
    const now = new Date();
    const last = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
    publisher.publish(`/free/dbip-city-lite-${last}.mmdb.gz`, { body: gzip(dbipCountryMmdb("NZ")) });
    const result = await cli(["data", "import", "--data", path, `${publisher.url}/free/dbip-city-lite-{YYYY}-{MM}.mmdb.gz`]);
    expect(result.stderr).toContain("HTTP 404; trying the month before");
    expect(result.code).toBe(0);
    expect(lookup(path, "1.0.0.1")).toMatchObject({ country_code: "NZ" });
    expect((await cli(["data", "update", "--data", path])).stdout).toStartWith("No source");
  });

  test("local files: compared by size and time, then SHA-256", async () => {
    const csv = join(dir, "local-asn.csv");
    writeFileSync(csv, "1.0.0.0,1.0.0.255,13335,Cloudflare\n");
    const path = join(dir, "local.db");
    expect((await cli(["data", "import", "--data", path, csv])).code).toBe(0);
    const before = identity(path);
    expect((await cli(["data", "update", "--data", path])).stdout).toStartWith("No source");
    // Rewritten with the same bytes: a new time, the same SHA-256.
    writeFileSync(csv, "1.0.0.0,1.0.0.255,13335,Cloudflare\n");
    expect((await cli(["data", "update", "--data", path])).stdout).toStartWith("No source");
    expect(identity(path)).toEqual(before);
    writeFileSync(csv, "1.0.0.0,1.0.0.255,64500,Example\n");
    // What an update killed on its way left: removed by the next, which holds the update
    // lock (whoever made the folders, named as mkdtemp names them, has ended), however
    // new; a data file under the temporary name of a process that may still run, once a day old.
    const old = new Date(Date.now() - 2 * 86_400_000);
    for (const leftover of [".local.db.sources-Old123", ".local.db.sources-123new", `local.db.${process.pid}.tmp`]) {
      mkdirSync(join(dir, leftover));
      if (!leftover.endsWith("new")) utimesSync(join(dir, leftover), old, old);
    }
    writeFileSync(join(dir, `local.db.${process.pid}.tmp-journal`), "");
    expect((await cli(["data", "update", "--data", path])).code).toBe(0);
    expect(lookup(path, "1.0.0.1")).toMatchObject({ asn: 64500 });
    expect(readdirSync(dir).filter((name) => name.includes("local.db.")).sort()).toEqual([`local.db.${process.pid}.tmp-journal`]);
  });

  test("a data file that records no sources cannot be updated: exit 1 saying so; a missing one is a bad --data", async () => {
    const result = await cli(["data", "update"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("does not record the sources it was built from");
    expect((await cli(["data", "update", "--data", join(dir, "nothing-here.db")])).code).toBe(2);
  });
});
