/**
 * A tiny MaxMind DB writer for tests: a search tree of the given networks (record size
 * 24, 28 or 32), a data section and the metadata map, built in memory. Not for real data:
 * no pointers in the data section, and a network inserted over an existing subtree simply
 * replaces it (insert wider networks first to nest narrower ones inside).
 */

/** A value with an explicit MaxMind DB type; plain JS values get a natural one. */
export type Typed =
  | { readonly type: "float" | "double"; readonly value: number }
  | { readonly type: "uint16" | "uint32" | "uint64"; readonly value: number | bigint };
export type MmdbValue = string | number | boolean | bigint | Typed | readonly MmdbValue[] | { readonly [key: string]: MmdbValue };

export const float = (value: number): Typed => ({ type: "float", value });
export const double = (value: number): Typed => ({ type: "double", value });
export const uint16 = (value: number): Typed => ({ type: "uint16", value });
export const uint32 = (value: number): Typed => ({ type: "uint32", value });
export const uint64 = (value: number | bigint): Typed => ({ type: "uint64", value });

export interface MmdbNetwork {
  /** "1.2.3.0/24" or "2001:db8::/32"; in an IPv6 tree an IPv4 network sits in ::/96. */
  readonly network: string;
  readonly value: MmdbValue;
}

export interface MmdbOptions {
  readonly ipVersion: 4 | 6;
  readonly recordSize?: 24 | 28 | 32;
  readonly networks: readonly MmdbNetwork[];
  /** IPv6 networks whose record points to the IPv4 start node (the node at ::/96). */
  readonly aliases?: readonly string[];
  readonly databaseType?: string;
  readonly description?: Readonly<Record<string, string>>;
  readonly buildEpoch?: number;
  /** Replaces or adds metadata keys (e.g. a bad binary_format_major_version). */
  readonly metadata?: Readonly<Record<string, MmdbValue>>;
  /** Share one data entry between equal values (as real writers do); default true. */
  readonly dedupe?: boolean;
}

export interface WrittenMmdb {
  readonly bytes: Uint8Array;
  readonly nodeCount: number;
  readonly recordSize: 24 | 28 | 32;
  readonly searchTreeSize: number;
  /** The node number at ::/96 in an IPv6 tree, when there is one. */
  readonly ipv4StartNode?: number;
}

type Child = { t: "node"; node: TreeNode } | { t: "data"; value: MmdbValue } | { t: "empty" } | { t: "alias" };
interface TreeNode {
  children: [Child, Child];
}

const EMPTY: Child = { t: "empty" };
const METADATA_MARKER = [0xab, 0xcd, 0xef, ...new TextEncoder().encode("MaxMind.com")];

export function writeMmdb(options: MmdbOptions): WrittenMmdb {
  const recordSize = options.recordSize ?? 28;
  const bits = options.ipVersion === 4 ? 32 : 128;
  const root: TreeNode = { children: [EMPTY, EMPTY] };
  for (const { network, value } of options.networks) {
    const { address, length } = parseNetwork(network, options.ipVersion);
    insert(root, address, length, bits, { t: "data", value });
  }
  let ipv4Start: TreeNode | undefined;
  if (options.aliases?.length) {
    ipv4Start = nodeAt(root, 96);
    for (const alias of options.aliases) {
      const { address, length } = parseNetwork(alias, 6);
      insert(root, address, length, bits, { t: "alias" });
    }
  } else if (options.ipVersion === 6) {
    ipv4Start = findNodeAt(root, 96);
  }

  // Number the nodes breadth first from the root.
  const order: TreeNode[] = [root];
  const numbers = new Map<TreeNode, number>([[root, 0]]);
  for (let i = 0; i < order.length; i++) {
    for (const child of order[i]!.children) {
      if (child.t === "node" && !numbers.has(child.node)) {
        numbers.set(child.node, order.length);
        order.push(child.node);
      }
    }
  }
  const nodeCount = order.length;

  const data: number[] = [];
  const offsets = new Map<string, number>();
  const dataOffset = (value: MmdbValue): number => {
    const key = options.dedupe === false ? `#${offsets.size}` : keyOf(value);
    let offset = offsets.get(key);
    if (offset === undefined) {
      offset = data.length;
      data.push(...encode(value));
      offsets.set(key, offset);
    }
    return offset;
  };

  const nodeByteSize = recordSize / 4;
  const searchTreeSize = nodeCount * nodeByteSize;
  const tree = new Uint8Array(searchTreeSize);
  order.forEach((node, number) => {
    node.children.forEach((child, side) => {
      let record: number;
      if (child.t === "node") record = numbers.get(child.node)!;
      else if (child.t === "empty") record = nodeCount;
      else if (child.t === "alias") record = numbers.get(ipv4Start!)!;
      else record = nodeCount + 16 + dataOffset(child.value);
      setRecord(tree, recordSize, number, side as 0 | 1, record);
    });
  });

  const metadata: Record<string, MmdbValue> = {
    binary_format_major_version: uint16(2),
    binary_format_minor_version: uint16(0),
    build_epoch: uint64(options.buildEpoch ?? 1_750_000_000),
    database_type: options.databaseType ?? "Test-DB",
    description: options.description ?? {},
    ip_version: uint16(options.ipVersion),
    languages: ["en"],
    node_count: uint32(nodeCount),
    record_size: uint16(recordSize),
    ...options.metadata,
  };
  const bytes = Uint8Array.from([...tree, ...new Array(16).fill(0), ...data, ...METADATA_MARKER, ...encode(metadata)]);
  return { bytes, nodeCount, recordSize, searchTreeSize, ipv4StartNode: ipv4Start && numbers.get(ipv4Start) };
}

/** Writes one record of a node (side 0 left, 1 right), as a reader expects it. */
export function setRecord(bytes: Uint8Array, recordSize: 24 | 28 | 32, node: number, side: 0 | 1, record: number): void {
  const at = node * (recordSize / 4);
  if (recordSize === 24) {
    putBE(bytes, at + side * 3, 3, record);
  } else if (recordSize === 32) {
    putBE(bytes, at + side * 4, 4, record);
  } else if (side === 0) {
    putBE(bytes, at, 3, record & 0xffffff);
    bytes[at + 3] = ((record >>> 24) << 4) | (bytes[at + 3]! & 0x0f);
  } else {
    bytes[at + 3] = (bytes[at + 3]! & 0xf0) | (record >>> 24);
    putBE(bytes, at + 4, 3, record & 0xffffff);
  }
}

function putBE(bytes: Uint8Array, at: number, size: number, value: number): void {
  for (let i = size - 1; i >= 0; i--) {
    bytes[at + i] = value & 0xff;
    value = Math.floor(value / 256);
  }
}

function insert(root: TreeNode, address: bigint, length: number, bits: number, leaf: Child): void {
  if (length === 0) throw new Error("a /0 network is not supported");
  let node = root;
  for (let depth = 0; depth < length; depth++) {
    const side = Number((address >> BigInt(bits - 1 - depth)) & 1n) as 0 | 1;
    if (depth === length - 1) {
      node.children[side] = leaf;
      return;
    }
    const child = node.children[side];
    if (child.t === "node") {
      node = child.node;
    } else {
      const split: TreeNode = { children: [child, child] };
      node.children[side] = { t: "node", node: split };
      node = split;
    }
  }
}

/** The node at the end of `depth` left records from the root, made if missing. */
function nodeAt(root: TreeNode, depth: number): TreeNode {
  let node = root;
  for (let i = 0; i < depth; i++) {
    const child = node.children[0];
    if (child.t === "node") {
      node = child.node;
    } else {
      const made: TreeNode = { children: [child, child] };
      node.children[0] = { t: "node", node: made };
      node = made;
    }
  }
  return node;
}

function findNodeAt(root: TreeNode, depth: number): TreeNode | undefined {
  let node = root;
  for (let i = 0; i < depth; i++) {
    const child = node.children[0];
    if (child.t !== "node") return undefined;
    node = child.node;
  }
  return node;
}

export function parseNetwork(text: string, ipVersion: 4 | 6): { address: bigint; length: number } {
  const [addressText = "", lengthText = ""] = text.split("/");
  let address: bigint;
  let length = Number(lengthText);
  if (addressText.includes(":")) {
    if (ipVersion === 4) throw new Error(`${text}: IPv6 in an IPv4 tree`);
    address = parseIPv6(addressText);
  } else {
    address = addressText.split(".").reduce((sum, octet) => (sum << 8n) | BigInt(Number(octet)), 0n);
    if (ipVersion === 6) length += 96;
  }
  return { address, length };
}

export function parseIPv6(text: string): bigint {
  const [head = "", tail] = text.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = [...left, ...new Array(8 - left.length - right.length).fill("0"), ...right];
  return all.reduce((sum, group) => (sum << 16n) | BigInt(parseInt(group, 16)), 0n);
}

function keyOf(value: MmdbValue): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? `${v}n` : typeof v === "number" ? `#${v}` : v));
}

const TYPE = { utf8: 2, double: 3, uint16: 5, uint32: 6, map: 7, uint64: 9, array: 11, boolean: 14, float: 15 } as const;

function encode(value: MmdbValue): number[] {
  if (typeof value === "string") {
    const bytes = [...new TextEncoder().encode(value)];
    return [...control(TYPE.utf8, bytes.length), ...bytes];
  }
  if (typeof value === "boolean") return control(TYPE.boolean, value ? 1 : 0);
  if (typeof value === "bigint") return encodeUint(TYPE.uint64, value);
  if (typeof value === "number") {
    if (Number.isInteger(value) && value >= 0 && value <= 0xffffffff) return encodeUint(value <= 0xffff ? TYPE.uint16 : TYPE.uint32, BigInt(value));
    return encodeDouble(value);
  }
  if (Array.isArray(value)) return [...control(TYPE.array, value.length), ...value.flatMap((item: MmdbValue) => encode(item))];
  if ("type" in value && (typeof value.value === "number" || typeof value.value === "bigint")) {
    const typed = value as Typed;
    if (typed.type === "double") return encodeDouble(Number(typed.value));
    if (typed.type === "float") {
      const view = new DataView(new ArrayBuffer(4));
      view.setFloat32(0, Number(typed.value));
      return [...control(TYPE.float, 4), ...new Uint8Array(view.buffer)];
    }
    return encodeUint(TYPE[typed.type], BigInt(typed.value));
  }
  const entries = Object.entries(value as Record<string, MmdbValue>);
  return [...control(TYPE.map, entries.length), ...entries.flatMap(([key, item]) => [...encode(key), ...encode(item)])];
}

function encodeDouble(value: number): number[] {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  return [...control(TYPE.double, 8), ...new Uint8Array(view.buffer)];
}

function encodeUint(type: number, value: bigint): number[] {
  const bytes: number[] = [];
  for (let rest = value; rest > 0n; rest >>= 8n) bytes.unshift(Number(rest & 0xffn));
  return [...control(type, bytes.length), ...bytes];
}

/** The control byte(s) of a field: type (extended past 7), then its size. */
function control(type: number, size: number): number[] {
  const head = type < 8 ? type << 5 : 0;
  const extended = type < 8 ? [] : [type - 7];
  if (size < 29) return [head | size, ...extended];
  if (size < 29 + 256) return [head | 29, ...extended, size - 29];
  if (size < 285 + 65536) return [head | 30, ...extended, (size - 285) >> 8, (size - 285) & 0xff];
  const rest = size - 65821;
  return [head | 31, ...extended, rest >> 16, (rest >> 8) & 0xff, rest & 0xff];
}
