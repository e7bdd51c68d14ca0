import type { Address } from "./address.ts";
import { parseAddress } from "./parse.ts";

/** An address block: every address whose first `prefix` bits equal the network's. */
export interface Cidr {
  readonly network: Address;
  readonly prefix: number;
}

/**
 * Parses `ADDRESS/PREFIX` (or a bare address, as a single-address block) with the strict
 * address parser. The host bits need not be zero (`10.1.2.3/8` means 10.0.0.0/8).
 * An IPv4-mapped IPv6 block (`::ffff:10.0.0.0/104`) is read as the IPv4 block it carries.
 * A mapped address with a prefix under 96 (`::ffff:10.0.0.0/95`) is refused: read as the
 * IPv6 block it would be, it reaches past the mapped addresses into IPv6 space, with its
 * host bits cleared where a caller takes the block around them (an allowlist, the
 * trusted proxies), so a slip meant as an IPv4 block would allow an IPv6 range nobody
 * named and no IPv4 client. MAPPED_PREFIX_HINT says why, for the callers' messages.
 */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf("/");
  const network = parseAddress(slash < 0 ? text : text.slice(0, slash));
  if (!network) return null;
  const max = network.version === 4 ? 32 : 128;
  if (slash < 0) return { network, prefix: max };
  const digits = text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(digits)) return null;
  const prefix = Number(digits);
  const mapped = network.version === 4 && text.includes(":");
  if (!mapped) return prefix > max ? null : { network, prefix };
  return prefix < 96 || prefix > 128 ? null : { network, prefix: prefix - 96 };
}

/** Whether parseCidr refused `text` as a mapped address with a prefix under 96 (which MAPPED_PREFIX_HINT explains). */
export function isShortMappedPrefix(text: string): boolean {
  const slash = text.indexOf("/");
  if (slash < 0 || !/^(0|[1-9][0-9]?)$/.test(text.slice(slash + 1)) || Number(text.slice(slash + 1)) >= 96) return false;
  const address = text.slice(0, slash);
  return address.includes(":") && parseAddress(address)?.version === 4;
}

/** What a message adds for a text isShortMappedPrefix refused. */
export const MAPPED_PREFIX_HINT = "an IPv4-mapped address (::ffff:a.b.c.d) takes a prefix of 96 to 128, the IPv4 block it carries";

/** True when the address lies in the block (families never match each other). */
export function cidrContains(cidr: Cidr, address: Address): boolean {
  const { network, prefix } = cidr;
  if (network.version === 4) {
    if (address.version !== 4) return false;
    if (prefix === 0) return true;
    const mask = prefix === 32 ? 0xffffffff : ~(0xffffffff >>> prefix);
    return ((network.value & mask) >>> 0) === ((address.value & mask) >>> 0);
  }
  if (address.version !== 6) return false;
  for (let word = 0, left = prefix; word < 4 && left > 0; word++, left -= 32) {
    const bits = Math.min(32, left);
    const mask = bits === 32 ? 0xffffffff : ~(0xffffffff >>> bits);
    if (((network.words[word] as number) & mask) >>> 0 !== ((address.words[word] as number) & mask) >>> 0) return false;
  }
  return true;
}

/** An IPv4 address's network at `prefix`: its first `prefix` bits, the rest zero. */
export function network32(value: number, prefix: number): number {
  return prefix === 0 ? 0 : (value & (0xffffffff << (32 - prefix))) >>> 0;
}

/** An IPv6 address's network at `prefix`, as four new words: its first `prefix` bits, the rest zero. */
export function network128(words: readonly number[], prefix: number): [number, number, number, number] {
  const network: [number, number, number, number] = [0, 0, 0, 0];
  for (let w = 0; w < 4; w++) {
    const bits = Math.min(32, Math.max(0, prefix - w * 32));
    const word = words[w] as number;
    network[w] = bits === 0 ? 0 : bits === 32 ? word : (word & (0xffffffff << (32 - bits))) >>> 0;
  }
  return network;
}
