import { expect, test } from "bun:test";
import fc from "fast-check";
import { classifyAddress, publicParts, publicSpans4, publicSpans6 } from "../../src/address/classify.ts";
import { parseAddress } from "../../src/address/parse.ts";
import { blockBounds } from "../../src/address/block-bounds.ts";
import { IPV4_SPECIAL_BLOCKS, IPV6_SPECIAL_BLOCKS } from "../../src/address/special-purpose.ts";

const v4 = (text: string) => {
  const address = parseAddress(text)!;
  return address.version === 4 ? BigInt(address.value) : -1n;
};
const v6 = (text: string) => {
  const address = parseAddress(text)!;
  return address.version === 6 ? address.words.reduce((sum, word) => (sum << 32n) | BigInt(word), 0n) : 0n;
};
const textOf = (value: bigint, bits: 32 | 128) => {
  if (bits === 32) return [24n, 16n, 8n, 0n].map((shift) => (value >> shift) & 255n).join(".");
  return Array.from({ length: 8 }, (_, i) => ((value >> BigInt(112 - 16 * i)) & 0xffffn).toString(16)).join(":");
};
const isPublic = (value: bigint, bits: 32 | 128) => classifyAddress(parseAddress(textOf(value, bits))!) === null;

test("the public parts of a span: what lookups answer of it", () => {
  expect(publicParts(32, v4("192.88.99.0"), v4("192.88.99.255"))).toEqual([
    [v4("192.88.99.0"), v4("192.88.99.1")],
    [v4("192.88.99.3"), v4("192.88.99.255")],
  ]);
  expect(publicParts(32, v4("10.0.0.0"), v4("10.255.255.255"))).toEqual([]);
  expect(publicParts(32, v4("8.8.8.0"), v4("8.8.8.255"))).toEqual([[v4("8.8.8.0"), v4("8.8.8.255")]]);
  // 192.0.0.9 and .10 are globally reachable inside the unreachable 192.0.0.0/24.
  expect(publicParts(32, v4("192.0.0.0"), v4("192.0.0.255"))).toEqual([[v4("192.0.0.9"), v4("192.0.0.10")]]);
  expect(publicParts(128, v6("2001::"), v6("2001:0:ffff:ffff:ffff:ffff:ffff:ffff"))).toEqual([]);
  expect(publicParts(128, v6("2001:1::"), v6("2001:1::ffff"))).toEqual([[v6("2001:1::1"), v6("2001:1::3")]]);
});

/** Spans around every registry block's edges: the places where public and not public meet. */
const edges = (blocks: readonly { cidr: string }[]) => blocks.flatMap(({ cidr }) => blockBounds(cidr)).flatMap((edge) => [edge - 1n, edge, edge + 1n]);

test("every address of a span near a registry edge is in its public parts exactly when lookups answer it", () => {
  for (const [bits, blocks] of [[32, IPV4_SPECIAL_BLOCKS], [128, IPV6_SPECIAL_BLOCKS]] as const) {
    const max = (1n << BigInt(bits)) - 1n;
    const around = edges(blocks).filter((edge) => edge >= 0n && edge <= max);
    fc.assert(
      fc.property(fc.constantFrom(...around), fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 40 }), (edge, before, after) => {
        const first = edge - BigInt(before) < 0n ? 0n : edge - BigInt(before);
        const last = edge + BigInt(after) > max ? max : edge + BigInt(after);
        const parts = publicParts(bits, first, last);
        for (let value = first; value <= last; value++) {
          const inParts = parts.some(([from, to]) => value >= from && value <= to);
          expect({ at: textOf(value, bits), inParts }).toEqual({ at: textOf(value, bits), inParts: isPublic(value, bits) });
        }
      }),
      { numRuns: 200 },
    );
  }
});

/** A quick test may say false for a span that is public (across two registry blocks), never true for one that is not. */
function agrees(quick: boolean, wholePublic: boolean): boolean {
  return quick ? wholePublic : true;
}

test("the quick tests for spans in address order: true only for spans public whole, and for the common ones", () => {
  const spans4 = publicSpans4();
  const starts = [0, v4("1.0.0.0"), v4("10.0.0.0"), v4("11.0.0.0"), v4("192.0.0.0"), v4("192.0.0.9"), v4("192.0.0.11"), v4("192.88.99.0"), v4("192.88.100.0"), v4("224.0.0.0")].map(Number);
  for (let i = 0; i < starts.length; i++) {
    const first = starts[i] as number;
    const end = i + 1 < starts.length ? (starts[i + 1] as number) : 2 ** 32;
    const whole = publicParts(32, BigInt(first), BigInt(end - 1));
    const expected = whole.length === 1 && whole[0]![0] === BigInt(first) && whole[0]![1] === BigInt(end - 1);
    const quick = spans4(first, end);
    expect({ first, agrees: agrees(quick, expected) }).toEqual({ first, agrees: true });
    if (first === Number(v4("1.0.0.0"))) expect(quick).toBe(true);
    if (!expected) expect(quick).toBe(false);
  }
  const spans6 = publicSpans6();
  const texts = ["2000::", "2001::", "2001:1::", "2001:1::1", "2001:1::4", "2001:4::", "2400::", "2600::", "3fff::", "4000::"];
  const words = new Uint32Array(texts.flatMap((text) => {
    const address = parseAddress(text)!;
    return address.version === 6 ? [...address.words] : [];
  }));
  for (let i = 0; i < texts.length; i++) {
    const first = v6(texts[i] as string);
    const last = i + 1 < texts.length ? v6(texts[i + 1] as string) - 1n : (1n << 128n) - 1n;
    const whole = publicParts(128, first, last);
    const expected = whole.length === 1 && whole[0]![0] === first && whole[0]![1] === last;
    const quick = spans6(words, i * 4, i + 1 < texts.length ? i * 4 + 4 : -1);
    expect({ at: texts[i], agrees: agrees(quick, expected) }).toEqual({ at: texts[i], agrees: true });
    if (texts[i] === "2400::") expect(quick).toBe(true);
    if (!expected) expect(quick).toBe(false);
  }
});
