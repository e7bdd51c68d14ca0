import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { download, DownloadError } from "../../../src/importer/fetch/download.ts";
import { streamProgress } from "../../../src/importer/progress.ts";
import { startPublisher, startTruncatingServer } from "../../support/publisher.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-download-"));
const publisher = startPublisher();
const other = startPublisher();
afterAll(() => {
  publisher.stop();
  other.stop();
  rmSync(dir, { recursive: true, force: true });
});
let n = 0;
const folder = () => join(dir, String(++n));
const body = new TextEncoder().encode("1.0.0.0,1.0.0.255,13335,Cloudflare\n".repeat(1000));
const sha256 = new Bun.CryptoHasher("sha256").update(body).digest("hex");

describe("download", () => {
  test("streams to a file named as the publisher names it, hashed, dated by Last-Modified; validators answered 304", async () => {
    const modified = new Date("2026-11-20T10:00:00Z");
    publisher.publish("/geoip/download", { body, modified, filename: "GeoLite2-ASN_20261120.tar.gz" });
    const got = await download({ url: `${publisher.url}/geoip/download?suffix=tar.gz` }, folder());
    if (got.kind !== "downloaded") throw new Error(got.kind);
    expect(got.name).toBe("GeoLite2-ASN_20261120.tar.gz");
    expect(got.path.endsWith("/GeoLite2-ASN_20261120.tar.gz")).toBe(true);
    expect(readFileSync(got.path)).toEqual(Buffer.from(body));
    expect(got.sha256).toBe(sha256);
    expect(got.size).toBe(body.byteLength);
    expect(statSync(got.path).mtime.toISOString()).toBe(modified.toISOString());
    expect(got.lastModified).toBe(modified.toUTCString());
    expect(got.etag).toMatch(/^"[0-9a-f]{16}"$/);

    expect((await download({ url: `${publisher.url}/geoip/download?suffix=tar.gz`, etag: got.etag }, folder())).kind).toBe("not-modified");
    expect((await download({ url: `${publisher.url}/geoip/download?suffix=tar.gz`, lastModified: got.lastModified }, folder())).kind).toBe("not-modified");
    const asked = publisher.requests.at(-2)?.headers ?? {};
    expect(asked["if-none-match"]).toBe(got.etag as string);
    expect(asked["user-agent"]).toMatch(/^iplookup\//);
  });

  test("Basic authentication from the URL's user info or given credentials, never sent on to another origin", async () => {
    publisher.publish("/private.csv", { body, auth: "123456:licence key" });
    const viaUrl = await download({ url: `${publisher.url.replace("http://", "http://123456:licence%20key@")}/private.csv` }, folder());
    expect(viaUrl.kind).toBe("downloaded");
    const viaEnv = await download({ url: `${publisher.url}/private.csv`, credentials: { user: "123456", password: "licence key" } }, folder());
    expect(viaEnv.kind).toBe("downloaded");
    const refused = download({ url: `${publisher.url}/private.csv`, credentials: { user: "123456", password: "wrong" } }, folder());
    await expect(refused).rejects.toThrow("HTTP 401 Unauthorized (check the credentials: IPLOOKUP_DOWNLOAD_AUTH, or the URL's user info)");

    // The publisher hands the download to a signed URL elsewhere, as MaxMind does.
    other.publish("/signed.csv", { body });
    publisher.publish("/redirected.csv", { body: "", auth: "u:p", redirect: `${other.url}/signed.csv` });
    const redirected = await download({ url: `${publisher.url}/redirected.csv`, credentials: { user: "u", password: "p" } }, folder());
    expect(redirected.kind).toBe("downloaded");
    expect(other.requests.at(-1)?.headers.authorization).toBeUndefined();
  });

  test("a 500, a body cut short, and silence are errors saying so", async () => {
    publisher.publish("/broken.mmdb", { body: "", status: 500 });
    await expect(download({ url: `${publisher.url}/broken.mmdb` }, folder())).rejects.toThrow(new DownloadError("HTTP 500 Internal Server Error"));
    const cut = startTruncatingServer(100_000, 5000);
    try {
      await expect(download({ url: `${cut.url}/x.mmdb` }, folder())).rejects.toThrow(/^the download was cut short.* of 100000/);
    } finally {
      cut.stop();
    }
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      await expect(download({ url: `http://127.0.0.1:${silent.port}/x` }, folder(), { connectMs: 200 })).rejects.toThrow("no answer within 0.2 s");
    } finally {
      silent.stop(true);
    }
  });

  test("on a terminal, the progress shows what is downloaded, of how much", async () => {
    publisher.publish("/big.csv", { body });
    const written: string[] = [];
    const progress = streamProgress({ isTTY: true, write: (text: string) => written.push(text) });
    await download({ url: `${publisher.url}/big.csv` }, folder(), { progress, label: "big.csv" });
    expect(written[0]).toMatch(/^\r\x1b\[Kdownloading big\.csv 0\.0 MiB of 0\.0 MiB \d+%$/);
  });
});
