import { afterAll, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { parseAddress } from "../../src/address/parse.ts";
import { ByteWriter } from "../../src/lookup/byte-writer.ts";
import { toLookupResult } from "../../src/lookup/lookup-result.ts";
import { writeResult } from "../../src/lookup/result-json.ts";
import { dataSet, fixture, fixtureDir, source } from "../importer/feeds/support.ts";

const dir = fixtureDir("json");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("with signals loaded, the JSON written directly equals JSON.stringify of the result, privacy last and in the contract's order", async () => {
  const { index } = await dataSet(dir, [
    source(fixture(dir, "tor", "185.220.101.1\n2001:67c:e60:c0c::/64\n"), { signal: "tor" }),
    source(fixture(dir, "relay.csv", "172.224.224.0/31,GB,GB-EN,London,\n"), { signal: "relay", service: 'Relay "quoted" \\ ünïcode' }),
    source(fixture(dir, "asn.csv", "185.220.100.0,185.220.103.255,60729,Stiftung Erneuerbare Freiheit\n")),
  ]);
  for (const text of ["185.220.101.1", "185.220.101.2", "172.224.224.1", "9.9.9.9", "2001:67c:e60:c0c::1", "2001:67c:e60:c0d::1"]) {
    const address = parseAddress(text)!;
    const hit = index.lookup(address);
    const out = new ByteWriter(8);
    writeResult(out, address, hit, index.notFoundBytes);
    const written = new TextDecoder("utf-8", { fatal: true }).decode(out.finish());
    const result = toLookupResult(address, hit, index.notFoundRecord);
    expect(written).toBe(JSON.stringify(result));
    expect(Object.keys(JSON.parse(written))).toEqual(["ip", "version", "found", "network", "asn", "as_name", "country_code", "country", "privacy"]);
    expect(Object.keys(JSON.parse(written).privacy)).toEqual(["hosting", "tor", "vpn", "relay", "proxy", "service"]);
  }
  // Nothing found: every field null, privacy false for the signals the data has sources of.
  expect(JSON.parse(`{${new TextDecoder().decode(index.notFoundBytes)}`)).toEqual({
    asn: null,
    as_name: null,
    country_code: null,
    country: null,
    privacy: { hosting: null, tor: false, vpn: null, relay: false, proxy: null, service: null },
  });
  expect(toLookupResult(parseAddress("172.224.224.1")!, index.lookup(parseAddress("172.224.224.1")!), index.notFoundRecord).privacy.service).toBe('Relay "quoted" \\ ünïcode');
});
