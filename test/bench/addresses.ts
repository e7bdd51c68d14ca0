import { readFileSync } from "node:fs";
import { checkAddress } from "../../src/address/check.ts";
import { ipv4Text, ipv6Text } from "../../src/address/parse.ts";
import { defaultSources } from "../../src/importer/default-dataset.ts";

/** A repeatable pseudo-random sequence, so every run measures the same addresses. */
export function seeded(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state;
  };
}

/**
 * Public addresses for the benches: half inside ranges of the source files (hits), half
 * drawn at random from the family's public space (for IPv6 mostly misses), as flat
 * strings.
 */
export function benchAddresses(family: 4 | 6, count: number, seed = 1): string[] {
  const random = seeded(seed);
  const source = defaultSources()[0]!.files.find((file) => file.family === family)!.path;
  const rows = readFileSync(source, "utf8").split("\n").filter(Boolean);
  const out: string[] = [];
  while (out.length < count) {
    let text: string;
    if (out.length % 2 === 0) {
      const row = rows[random() % rows.length]!;
      const start = BigInt(row.slice(0, row.indexOf(",")));
      const value = start + BigInt(random() % 256);
      text = family === 4 ? ipv4Text(Number(value & 0xffffffffn)) : ipv6Text([0, 1, 2, 3].map((w) => Number((value >> BigInt(96 - 32 * w)) & 0xffffffffn)));
    } else {
      text = family === 4 ? ipv4Text(random()) : ipv6Text([0x20000000 | (random() & 0x1fffffff), random(), random(), random()]);
    }
    if (checkAddress(text).ok) out.push(text);
  }
  // As a request brings them: JSON.parse makes flat strings, while the texts built here
  // by concatenation are ropes to the engine, and reading a rope character by character
  // costs more even after its first read (the bench's IPv6 parse: ~220 ns a rope, ~85 ns
  // flat; mmdb-lib's lookup 5–10% more on ropes).
  return JSON.parse(JSON.stringify(out)) as string[];
}
