import { expect, test } from "bun:test";
import { parseAddress } from "../../src/address/parse.ts";
import { toLookupResult } from "../../src/lookup/lookup-result.ts";
import { LookupService } from "../../src/lookup/lookup-service.ts";
import type { Address } from "../../src/address/address.ts";
import type { IndexHit } from "../../src/index/range-index.ts";
import { ByteWriter } from "../../src/lookup/byte-writer.ts";
import { writeResult } from "../../src/lookup/result-json.ts";
import { benchAddresses } from "../bench/addresses.ts";
import { defaultIndex } from "../support/default-data.ts";

test("the JSON written directly equals JSON.stringify of the result objects, byte for byte", () => {
  const index = defaultIndex();
  const texts = [...benchAddresses(4, 3000, 5), ...benchAddresses(6, 3000, 7), "1.1.1.1", "2c0f:ffff:ffff::1"];
  let notFound = 0;
  for (const text of texts) {
    const address = parseAddress(text)!;
    const hit = index.lookup(address);
    if (!hit) notFound++;
    expect(resultJson(address, hit, index.notFoundBytes)).toBe(JSON.stringify(toLookupResult(address, hit, index.notFoundRecord)));
  }
  expect(notFound).toBeGreaterThan(10);
});

test("a batch's JSON is {results: […]} in input order, duplicates repeated", () => {
  const index = defaultIndex();
  const service = new LookupService(() => index);
  const addresses = service.resolve(["8.8.8.8", "1.1.1.1", "8.8.8.8", "2606:4700:4700::1111"]);
  expect(JSON.parse(text(service.lookupJson(addresses, true).body))).toEqual({ results: service.lookup(addresses) });
  expect(JSON.parse(text(service.lookupJson(addresses.slice(0, 1), false).body))).toEqual(service.lookup(addresses)[0]!);
});

test("answers in turn each say their own addresses: a shorter batch after a longer one and the other way round", () => {
  const index = defaultIndex();
  const service = new LookupService(() => index);
  const long = service.resolve([...benchAddresses(4, 300, 11), ...benchAddresses(6, 100, 13)]);
  const short = service.resolve(["1.1.1.1", "2606:4700:4700::1111", "8.8.8.8"]);
  for (const addresses of [long, short, long.slice(7, 9), short.slice(1)]) {
    expect(JSON.parse(text(service.lookupJson(addresses, true).body))).toEqual({ results: service.lookup(addresses) });
  }
});

/** One result written as bytes (a small buffer, so growing is exercised too), as text. */
function resultJson(address: Address, hit: IndexHit | null, notFound: Uint8Array): string {
  const out = new ByteWriter(8);
  writeResult(out, address, hit, notFound);
  return text(out.finish());
}

function text(bytes: Uint8Array): string {
  return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
}
