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
 */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf("/");
  const network = parseAddress(slash < 0 ? text : text.slice(0, slash));
  if (!network) return null;
  const max = network.version === 4 ? 32 : 128;
  if (slash < 0) return { network, prefix: max };
  const digits = text.slice(slash + 1);
  if (!/^(0|[1-9][0-9]{0,2})$/.test(digits)) return null;
  let prefix = Number(digits);
  const mapped = network.version === 4 && text.includes(":");
  if (mapped) prefix -= 96;
  if (prefix < 0 || prefix > max) return null;
  return { network, prefix };
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
