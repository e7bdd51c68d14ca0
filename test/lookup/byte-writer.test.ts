import { expect, test } from "bun:test";
import { ipv4Text, ipv6Text } from "../../src/address/parse.ts";
import { ByteWriter } from "../../src/lookup/byte-writer.ts";

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

test("every octet value is written in every position of a dotted quad as ipv4Text writes it", () => {
  for (let octet = 0; octet < 256; octet++) {
    for (const shift of [24, 16, 8, 0]) {
      const value = ((octet << shift) | (shift === 0 ? 0x01020300 : 7)) >>> 0;
      const out = new ByteWriter(1);
      out.ipv4(value);
      expect(text(out.finish())).toBe(ipv4Text(value));
    }
  }
});

test("IPv6 addresses are written in their RFC 5952 text", () => {
  const cases: [number, number, number, number][] = [
    [0, 0, 0, 0],
    [0, 0, 0, 1],
    [0x20010db8, 0, 0, 1],
    [0x20010db8, 0x00010000, 0, 0x00000001],
    [0x26064700, 0x47000000, 0, 0x1111],
    [0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff],
    [0x20010db8, 0xabcd0012, 0x00000000, 0x00010000],
  ];
  for (const words of cases) {
    const out = new ByteWriter(1);
    out.ipv6(words);
    expect(text(out.finish())).toBe(ipv6Text(words));
  }
});

test("pieces of every size, below and above the loop's limit, come out whole and in order, growing the buffer", () => {
  const out = new ByteWriter(1);
  let expected = "";
  for (const size of [0, 1, 7, 31, 32, 33, 47, 48, 110, 255, 256, 257, 5000]) {
    const piece = "abcdefghijklmnopqrstuvwxyz".repeat(200).slice(0, size).toUpperCase();
    out.raw(new TextEncoder().encode(piece));
    out.ascii(",");
    out.ascii(String(size % 1000));
    expected += `${piece},${size % 1000}`;
  }
  expect(text(out.finish())).toBe(expected);
});
