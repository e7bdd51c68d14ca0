import { ValueTable } from "../source-data.ts";
import { fieldValuesOf } from "./mmdb-fields.ts";
import type { MmdbFile } from "./mmdb-file.ts";
import { leftRecord, rightRecord } from "./node-records.ts";
import type { RangeCollector } from "./range-collector.ts";

const PROGRESS_EVERY = 65_536;

/**
 * Walks subtrees of an MMDB search tree depth first, left before right, so that leaves
 * come out in address order, and hands them to a RangeCollector with their value's id in
 * `table`. Each data offset is decoded once. Paths are 128 bits: an IPv4 tree is walked
 * from depth 96, as if it sat at ::/96.
 *
 * Work is bounded on any input: a path is at most 128 records long, and a tree that
 * reaches more nodes than it has (a record pointing back up, or into a shared subtree) is
 * refused before it can take exponential time.
 */
export class TreeWalker {
  readonly table = new ValueTable();
  /** Nodes entered so far, over all walks. */
  visited = 0;
  private readonly ids = new Map<number, number>();
  private readonly path = new Uint32Array(4);
  private readonly nodes = new Float64Array(129);
  private readonly sides = new Uint8Array(129);

  constructor(
    private readonly file: MmdbFile,
    private readonly progress?: (done: number, total: number) => void,
  ) {}

  /**
   * Walks the subtree under node `start`, at absolute depth `startDepth` (its path bits
   * above that are zero). A record equal to `skip` (a node number; -1 for none) is left out
   * as a gap. When `v4Leaf` is given, the leaf with that record at that prefix length on
   * the all-zero path holds IPv4 as well: it starts at 2^32, or is left out if it is ::/96.
   */
  walk(start: number, startDepth: number, into: RangeCollector, skip = -1, v4Leaf?: { record: number; length: number }): void {
    const { bytes, recordSize, nodeCount, nodeByteSize } = this.file;
    const { path, nodes, sides } = this;
    path.fill(0);
    into.gap();
    this.enter();
    let top = 0;
    nodes[0] = start;
    sides[0] = 0;
    let lastRecord = -1;
    let lastId = -1;
    while (top >= 0) {
      const side = sides[top]!;
      if (side === 2) {
        top--;
        continue;
      }
      sides[top] = side + 1;
      const depth = startDepth + top;
      const word = depth >>> 5;
      const bit = 1 << (31 - (depth & 31));
      const offset = nodes[top]! * nodeByteSize;
      let record: number;
      if (side === 0) {
        path[word] = path[word]! & ~bit;
        record = leftRecord(bytes, recordSize, offset);
      } else {
        path[word] = path[word]! | bit;
        record = rightRecord(bytes, recordSize, offset);
      }
      if (record < nodeCount) {
        if (record === skip) {
          into.gap();
          continue;
        }
        if (depth + 1 >= 128) throw new Error(`truncated or damaged: the search tree is deeper than ${this.file.metadata.ipVersion === 4 ? 32 : 128} bits`);
        this.enter();
        top++;
        nodes[top] = record;
        sides[top] = 0;
      } else if (record === nodeCount) {
        into.gap();
      } else {
        if (record !== lastRecord) {
          lastId = this.valueId(record);
          lastRecord = record;
        }
        if (v4Leaf && record === v4Leaf.record && depth + 1 === v4Leaf.length && isZero(path, depth + 1)) {
          if (v4Leaf.length === 96) into.gap();
          else into.leaf(lastId, path, depth + 1, true);
          continue;
        }
        into.leaf(lastId, path, depth + 1);
      }
    }
    into.finish();
  }

  /** The id in `table` of the value a data record points to. */
  valueId(record: number): number {
    let id = this.ids.get(record);
    if (id === undefined) {
      id = this.table.intern(fieldValuesOf(this.file.decode(record)));
      this.ids.set(record, id);
    }
    return id;
  }

  private enter(): void {
    const visited = ++this.visited;
    if (visited > this.file.nodeCount) throw new Error("truncated or damaged: the search tree reaches more nodes than it has (a record points back into the tree)");
    if (visited % PROGRESS_EVERY === 0) this.progress?.(visited, this.file.nodeCount);
  }
}

/** Whether the first `length` bits of the path are all zero. */
function isZero(path: Uint32Array, length: number): boolean {
  for (let bit = 0; bit < length; bit += 32) {
    const kept = Math.min(32, length - bit);
    if (path[bit >>> 5]! >>> (32 - kept) !== 0) return false;
  }
  return true;
}
