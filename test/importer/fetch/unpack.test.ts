import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createTarPacker } from "modern-tar";
import { unpack } from "../../../src/importer/fetch/unpack.ts";
import { dbipCountryMmdb, geoLite2AsnMmdb, gzip, iptoasnTsv, maxmindTarGz, zip } from "../../support/download-fixtures.ts";
import { runCliInProcess } from "../../support/in-process-cli.ts";
import { startPublisher } from "../../support/publisher.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-unpack-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function put(name: string, bytes: Uint8Array | string): string {
  const folder = join(dir, `in-${++n}`);
  mkdirSync(folder);
  const path = join(folder, name);
  writeFileSync(path, bytes);
  return path;
}
const out = () => join(dir, `out-${++n}`);

test("MaxMind's .tar.gz: the .mmdb found by its format, COPYRIGHT.txt and LICENSE.txt left out", async () => {
  const mmdb = geoLite2AsnMmdb();
  const file = put("GeoLite2-ASN_20261120.tar.gz", await maxmindTarGz("GeoLite2-ASN", "20261120", mmdb));
  const result = await unpack(file, "GeoLite2-ASN_20261120.tar.gz", out());
  expect(result.container).toBe("tar.gz");
  expect(result.files.map((f) => f.member)).toEqual(["GeoLite2-ASN_20261120/GeoLite2-ASN.mmdb"]);
  const [only] = result.files;
  expect(only?.path.endsWith("/GeoLite2-ASN.mmdb")).toBe(true);
  expect(readFileSync(only?.path as string)).toEqual(Buffer.from(mmdb));
});

test("DB-IP's .mmdb.gz and iptoasn's .tsv.gz: one file, named without .gz, as old as the download", async () => {
  const mmdbGz = put("dbip-country-lite-2026-11.mmdb.gz", gzip(dbipCountryMmdb()));
  const when = new Date("2026-11-01T00:00:00Z");
  utimesSync(mmdbGz, when, when);
  const mmdb = await unpack(mmdbGz, "dbip-country-lite-2026-11.mmdb.gz", out());
  expect(mmdb.container).toBe("gzip");
  expect(mmdb.files[0]?.path.endsWith("/dbip-country-lite-2026-11.mmdb")).toBe(true);
  expect(statSync(mmdb.files[0]?.path as string).mtime.toISOString()).toBe(when.toISOString());
  const tsv = await unpack(put("ip2asn-combined.tsv.gz", gzip(iptoasnTsv())), "ip2asn-combined.tsv.gz", out());
  expect(readFileSync(tsv.files[0]?.path as string, "utf8")).toBe(iptoasnTsv());
  // Not compressed: used where it is.
  const plain = put("asn.csv", "1.0.0.0,1.0.0.255,13335,Cloudflare\n");
  expect(await unpack(plain, "asn.csv", out())).toEqual({ container: null, files: [{ path: plain }] });
});

test("a zip with the IPv4 and IPv6 halves of a data set: both kept, the README not", async () => {
  const file = put("asn.zip", zip({ "README.md": "# ASN data\n", "asn/asn-ipv4.csv": "1.0.0.0,1.0.0.255,13335,Cloudflare\n", "asn/asn-ipv6.csv": "2606:4700::,2606:4700::ffff,13335,Cloudflare\n" }));
  const result = await unpack(file, "asn.zip", out());
  expect(result.container).toBe("zip");
  expect(result.files.map((f) => f.member)).toEqual(["asn/asn-ipv4.csv", "asn/asn-ipv6.csv"]);
});

test("an archive without a data file says what it holds; a name in an archive never chooses where a file goes", async () => {
  const docs = put("docs.tar.gz", await new Bun.Archive({ "x/COPYRIGHT.txt": "c", "x/LICENSE.txt": "l" }, { compress: "gzip" }).bytes());
  await expect(unpack(docs, "docs.tar.gz", out())).rejects.toThrow("no data file in the archive (it holds x/COPYRIGHT.txt, x/LICENSE.txt)");

  const { readable, controller } = createTarPacker();
  const body = new TextEncoder().encode("1.0.0.0,1.0.0.255,AU\n");
  const entry = controller.add({ name: "../../escaped.csv", size: body.byteLength });
  const writer = entry.getWriter();
  await writer.write(body);
  await writer.close();
  controller.finalize();
  const tar = put("evil.tar", new Uint8Array(await new Response(readable).arrayBuffer()));
  const target = out();
  const result = await unpack(tar, "evil.tar", target);
  expect(result.container).toBe("tar");
  expect(result.files[0]?.path).toBe(join(target, "1", "escaped.csv"));
  expect(existsSync(join(dir, "escaped.csv"))).toBe(false);
});

test("a gzip file named `..gz`, `...gz` or `.gz` (a publisher's Content-Disposition): unpacked into its folder under a name of its own, as an archive member would be", async () => {
  const tsv = iptoasnTsv();
  for (const [name, unpacked] of [["..gz", "file"], ["...gz", "file"], [".gz", "data"], ["..tgz", "..tar"]] as const) {
    const target = out();
    const result = await unpack(put("download", gzip(tsv)), name, target);
    expect({ name, container: result.container, path: result.files[0]?.path }).toEqual({ name, container: "gzip", path: join(target, "1", unpacked) });
    expect(readFileSync(result.files[0]?.path as string, "utf8")).toBe(tsv);
  }
});

test("data import of a gzip download its publisher names `..gz`: imported", async () => {
  const publisher = startPublisher();
  try {
    publisher.publish("/asn", { body: gzip(`${iptoasnTsv()}\n`), filename: "..gz" });
    // None published beside it.
    publisher.publish("/asn.sha256", { body: "", status: 404 });
    const result = await runCliInProcess(join(dir, "no-default.db"), ["data", "import", "--data", join(out(), "data.db"), `${publisher.url}/asn`]);
    expect(result.stderr).not.toContain("EEXIST");
    expect(result.code).toBe(0);
  } finally {
    publisher.stop();
  }
});

test("damaged compressed files are refused with the reason", async () => {
  const gz = gzip(dbipCountryMmdb());
  await expect(unpack(put("cut.mmdb.gz", gz.subarray(0, gz.byteLength - 40)), "cut.mmdb.gz", out())).rejects.toThrow(/^cannot decompress it/);
});
