/**
 * The first and last address of a CIDR block written in canonical-enough text
 * (`10.0.0.0/8`, `2001:db8::/32`), as BigInts. For building tables at load time, not
 * for the request path.
 */
export function blockBounds(cidr: string): [bigint, bigint] {
  const [address = "", prefixText = ""] = cidr.split("/");
  const bits = address.includes(":") ? 128 : 32;
  const prefix = BigInt(prefixText);
  const value = bits === 32 ? ipv4BigInt(address) : ipv6BigInt(address);
  const hostBits = BigInt(bits) - prefix;
  const start = (value >> hostBits) << hostBits;
  return [start, start + (1n << hostBits) - 1n];
}

function ipv4BigInt(text: string): bigint {
  return text.split(".").reduce((value, part) => (value << 8n) | BigInt(Number(part)), 0n);
}

function ipv6BigInt(text: string): bigint {
  const [head = "", tail] = text.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const middle = Array<string>(8 - left.length - right.length).fill("0");
  return [...left, ...middle, ...right].reduce((value, group) => (value << 16n) | BigInt(parseInt(group, 16)), 0n);
}
