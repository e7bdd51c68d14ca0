import type { Address } from "./address.ts";
import { cidrContains, type Cidr } from "./cidr.ts";

/**
 * A list of blocks made ready for asking, on every request, whether one holds an
 * address: the IPv4 blocks as pairs of (network, mask) in one typed array, so a test is
 * a few integer operations each with no object read, and the IPv6 blocks as they are.
 * Answers exactly as `cidrContains` over the list would.
 */
export class CidrSet {
  /** Per IPv4 block: its network with the host bits cleared, then its mask (unsigned). */
  private readonly v4: Uint32Array;
  private readonly v6: readonly Cidr[];

  constructor(cidrs: readonly Cidr[]) {
    const v4: number[] = [];
    const v6: Cidr[] = [];
    for (const cidr of cidrs) {
      const { network, prefix } = cidr;
      if (network.version === 6) {
        v6.push(cidr);
        continue;
      }
      const mask = prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
      v4.push((network.value & mask) >>> 0, mask);
    }
    this.v4 = Uint32Array.from(v4);
    this.v6 = v6;
  }

  has(address: Address): boolean {
    if (address.version === 4) {
      const value = address.value;
      const v4 = this.v4;
      for (let i = 0; i < v4.length; i += 2) if (((value & (v4[i + 1] as number)) >>> 0) === v4[i]) return true;
      return false;
    }
    for (let i = 0; i < this.v6.length; i++) if (cidrContains(this.v6[i] as Cidr, address)) return true;
    return false;
  }
}
