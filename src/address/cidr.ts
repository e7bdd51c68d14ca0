import type { Address } from "./address.ts";
import { ipv6Text, parseAddress } from "./parse.ts";

/** An address block: every address whose first `prefix` bits equal the network's. */
export interface Cidr {
  readonly network: Address;
  readonly prefix: number;
}

/**
 * Parses `ADDRESS/PREFIX` (or a bare address, as a single-address block) with the strict
 * address parser. The host bits need not be zero (`10.1.2.3/8` means 10.0.0.0/8).
 * An IPv4-mapped IPv6 block (`::ffff:10.0.0.0/104`) is read as the IPv4 block it carries.
 * A mapped address with a prefix under 96 (`::ffff:0:0/95`) is no such block: it is an
 * IPv6 block reaching past ::ffff:0:0/96, written with host bits set (the last bit of
 * `ffff` is one), and is read as one, so that a caller refusing host bits names the
 * block meant (::fffe:0:0/95) rather than calling the text no block at all.
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
  if (prefix > 128) return null;
  if (prefix >= 96) return { network, prefix: prefix - 96 };
  const words = [0, 0, 0xffff, network.value] as const;
  return { network: { version: 6, text: ipv6Text(words), words }, prefix };
}

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
