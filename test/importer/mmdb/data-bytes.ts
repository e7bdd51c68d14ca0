/**
 * MaxMind DB data written byte by byte, pointers included, for tests that need data no
 * real writer makes: shared subtrees, pointers back to themselves, damaged sizes. See the
 * MaxMind DB spec, "Output Data Section".
 */

/** The control byte(s) of a field of `type` (1 … 15) and `size`. */
export function control(type: number, size: number): number[] {
  const head = type < 8 ? type << 5 : 0;
  const extended = type < 8 ? [] : [type - 7];
  if (size < 29) return [head | size, ...extended];
  if (size < 285) return [head | 29, ...extended, size - 29];
  if (size < 65821) return [head | 30, ...extended, (size - 285) >> 8, (size - 285) & 0xff];
  const rest = size - 65821;
  return [head | 31, ...extended, (rest >> 16) & 0xff, (rest >> 8) & 0xff, rest & 0xff];
}

export function string(text: string): number[] {
  const bytes = [...new TextEncoder().encode(text)];
  return [...control(2, bytes.length), ...bytes];
}

export function uint(type: 5 | 6 | 9 | 10, value: number | bigint): number[] {
  const bytes: number[] = [];
  for (let rest = BigInt(value); rest > 0n; rest >>= 8n) bytes.unshift(Number(rest & 0xffn));
  return [...control(type, bytes.length), ...bytes];
}

export function int32(value: number): number[] {
  const view = new DataView(new ArrayBuffer(4));
  view.setInt32(0, value);
  return [...control(8, 4), ...new Uint8Array(view.buffer)];
}

export function double(value: number): number[] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  return [...control(3, 8), ...new Uint8Array(view.buffer)];
}

export function float(value: number): number[] {
  const view = new DataView(new ArrayBuffer(4));
  view.setFloat32(0, value);
  return [...control(15, 4), ...new Uint8Array(view.buffer)];
}

export function boolean(value: boolean): number[] {
  return control(14, value ? 1 : 0);
}

export function bytes(content: readonly number[]): number[] {
  return [...control(4, content.length), ...content];
}

export function map(entries: ReadonlyArray<readonly [number[], number[]]>): number[] {
  return [...control(7, entries.length), ...entries.flatMap(([key, value]) => [...key, ...value])];
}

export function array(items: readonly number[][]): number[] {
  return [...control(11, items.length), ...items.flat()];
}

/** A pointer to `offset` bytes into the section, in the fewest bytes. */
export function pointer(offset: number): number[] {
  if (offset < 2048) return [0x20 | (offset >> 8), offset & 0xff];
  if (offset < 526336) {
    const v = offset - 2048;
    return [0x28 | (v >> 16), (v >> 8) & 0xff, v & 0xff];
  }
  if (offset < 134744064) {
    const v = offset - 526336;
    return [0x30 | (v >> 24), (v >> 16) & 0xff, (v >> 8) & 0xff, v & 0xff];
  }
  return [0x38, (offset >>> 24) & 0xff, (offset >> 16) & 0xff, (offset >> 8) & 0xff, offset & 0xff];
}

/**
 * Arrays (or maps) of `entries` pointers to the level below, `levels` deep, over a
 * string: a few hundred bytes that decode into entries^levels strings. The bytes are
 * meant to sit at offset `at` of their section; the value to decode starts there.
 */
export function sharedLevels(levels: number, entries: number, kind: "array" | "map" = "array", at = 0): number[] {
  const level = (target: number) => {
    const items = Array.from({ length: entries }, () => pointer(target));
    return kind === "array" ? array(items) : map(items.map((item, i) => [string(`k${i}`), item] as const));
  };
  // Level k sits at `at` + k × size (every level has the same size: all pointers are short).
  const size = level(0).length;
  if (at + (levels + 1) * size >= 2048) throw new Error("sharedLevels: too large for short pointers");
  const data: number[] = [];
  for (let k = 0; k < levels; k++) data.push(...level(at + (k + 1) * size));
  data.push(...string("leaf"));
  return data;
}

const MARKER = [0xab, 0xcd, 0xef, ...new TextEncoder().encode("MaxMind.com")];

/**
 * An IPv4 MMDB (record size 24) whose one node's left record (0.0.0.0/1) points at
 * `recordAt` in `data`, and whose right record is empty. `metadataValue`, when given,
 * makes the value of a last metadata key "extra", given the offset in the metadata
 * section where that value starts.
 */
export function rawMmdb(data: readonly number[], options: { recordAt?: number; metadataValue?: (at: number) => number[] } = {}): Uint8Array {
  const nodeCount = 1;
  const record = nodeCount + 16 + (options.recordAt ?? 0);
  const tree = [(record >> 16) & 0xff, (record >> 8) & 0xff, record & 0xff, 0, 0, nodeCount];
  const entries: Array<readonly [number[], number[]]> = [
    [string("binary_format_major_version"), uint(5, 2)],
    [string("binary_format_minor_version"), uint(5, 0)],
    [string("build_epoch"), uint(9, 1_750_000_000)],
    [string("database_type"), string("Hostile-Test")],
    [string("ip_version"), uint(5, 4)],
    [string("node_count"), uint(6, nodeCount)],
    [string("record_size"), uint(5, 24)],
  ];
  let metadata = map(entries);
  if (options.metadataValue) {
    const key = string("extra");
    const head = [...control(7, entries.length + 1), ...entries.flatMap(([k, v]) => [...k, ...v]), ...key];
    metadata = [...head, ...options.metadataValue(head.length)];
  }
  return Uint8Array.from([...tree, ...new Array(16).fill(0), ...data, ...MARKER, ...metadata]);
}
