import { expect, test } from "bun:test";
import fc from "fast-check";
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

test("canonical text agrees with ipaddr.js when :: stands on any run of zeros, canonical or not", () => {
  let seed = 7;
  // The high bits: the low bits of this generator repeat with a short period.
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return Math.floor(seed / 65536) % n;
  };
  for (let round = 0; round < 5000; round++) {
    const groups = Array.from({ length: 8 }, () => (random(2) === 0 ? random(65536) : 0));
    // Lower case without leading zeros, as RFC 5952 writes groups; `::` on a random run of
    // zero groups (one group long included), or nowhere.
    const hex = groups.map((g) => g.toString(16));
    const runs: [number, number][] = [];
    for (let g = 0; g < 8; g++) {
      if (groups[g] !== 0) continue;
      let end = g + 1;
      while (end < 8 && groups[end] === 0) end++;
      for (let from = g; from < end; from++) for (let to = from + 1; to <= end; to++) runs.push([from, to]);
      g = end;
    }
    const run = runs.length > 0 && random(4) > 0 ? runs[random(runs.length)] : undefined;
    const text = run ? `${hex.slice(0, run[0]).join(":")}::${hex.slice(run[1]).join(":")}` : hex.join(":");
    const ours = parseAddress(text);
    if (ours?.version === 4) continue; // ::ffff:… is an IPv4 address
    expect(ours?.version).toBe(6);
    expect(ours!.text).toBe(ipaddr.IPv6.parse(text).toRFC5952String());
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

/** Strict dotted quad, written independently of the parser: 0–255 without leading zeros. */
const STRICT_IPV4 = /^(?:(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])\.){3}(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])$/;

/** Short texts over the characters addresses are made of, so near-misses are common. */
const addressLike = fc.array(fc.constantFrom("0", "1", "2", "5", "9", "a", "F", "f", ":", ":", ".", "."), { maxLength: 24 }).map((chars) => chars.join(""));
const dottedLike = fc.array(fc.constantFrom("0", "1", "2", "5", "9", "."), { maxLength: 16 }).map((chars) => chars.join(""));

test("on dotted texts, the parser accepts exactly the strict dotted quads", () => {
  fc.assert(
    fc.property(fc.oneof(dottedLike, fc.tuple(fc.nat(300), fc.nat(300), fc.nat(300), fc.nat(300)).map((parts) => parts.join("."))), (text) => {
      expect({ text, accepted: parseAddress(text) !== null }).toEqual({ text, accepted: STRICT_IPV4.test(text) });
    }),
    { numRuns: 20_000 },
  );
});

test("whatever the parser accepts, ipaddr.js reads as the same address", () => {
  fc.assert(
    fc.property(addressLike, (text) => {
      const ours = parseAddress(text);
      if (ours === null) return;
      // ipaddr.js reads `::a.b.c.d` (the deprecated IPv4-compatible form) as IPv4-mapped;
      // RFC 4291 reads it as 0:0:0:0:0:0:a.b.c.d, as the strict parser does. Spelled with
      // an explicit zero group, ipaddr.js reads it that way too.
      const theirs = ipaddr.parse(/^::[0-9]+\./.test(text) ? `::0:${text.slice(2)}` : text);
      const bytes = theirs.kind() === "ipv6" && (theirs as ipaddr.IPv6).isIPv4MappedAddress() ? (theirs as ipaddr.IPv6).toIPv4Address().toByteArray() : theirs.toByteArray();
      const expected = ours.version === 4 ? [ours.value >>> 24, (ours.value >>> 16) & 255, (ours.value >>> 8) & 255, ours.value & 255] : ours.words.flatMap((w) => [w >>> 24, (w >>> 16) & 255, (w >>> 8) & 255, w & 255]);
      expect({ text, bytes }).toEqual({ text, bytes: expected });
    }),
    { numRuns: 50_000 },
  );
});
