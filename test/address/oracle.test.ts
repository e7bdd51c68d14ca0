import { expect, test } from "bun:test";
import ipaddr from "ipaddr.js";
import { parseAddress } from "../../src/address/parse.ts";

/**
 * ipaddr.js as an independent oracle: on every text our strict parser accepts, it must
 * read the same address, and its RFC 5952 text must be ours. (It also accepts legacy
 * forms we refuse; those are covered by the parser's own tests.)
 */
test("canonical text agrees with ipaddr.js on random IPv6 addresses in many spellings", () => {
  let seed = 99;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  for (let round = 0; round < 5000; round++) {
    // Groups biased toward zero so that runs of zeros, and ties between runs, are common.
    const groups = Array.from({ length: 8 }, () => (random(3) === 0 ? random(65536) : 0));
    groups[0] = 0x2000 + random(0x1000);
    const full = groups.map((g) => g.toString(16).padStart(random(2) ? 4 : 1, "0")).join(":");
    const text = random(2) ? full.toUpperCase() : full;
    const ours = parseAddress(text);
    expect(ours?.version).toBe(6);
    expect(ours!.text).toBe(ipaddr.IPv6.parse(text).toRFC5952String());
    expect(parseAddress(ours!.text)).toEqual(ours!);
  }
});

test("IPv4 values agree with ipaddr.js", () => {
  for (let i = 0; i < 2000; i++) {
    const parts = [i % 256, (i * 7) % 256, (i * 13) % 256, (i * 31) % 256];
    const text = parts.join(".");
    const ours = parseAddress(text);
    expect(ours?.version).toBe(4);
    const bytes = ipaddr.IPv4.parse(text).toByteArray();
    expect(ours!.version === 4 && ours!.value).toBe(((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0);
  }
});
