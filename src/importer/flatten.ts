import { compareAddresses, LayerBuilder, nextAddress, sliceLayer, type PackedLayer } from "./packed-layer.ts";
import type { ValueRange } from "./ranges.ts";

/**
 * Flattens the rows of one source file into disjoint ranges, sorted by start, by the
 * rule of CONTRACT §7: where rows overlap, the row that comes later in the file wins for
 * the addresses it covers.
 *
 * This form, over ValueRange objects, is the rule at its plainest; the importer runs
 * flattenPacked, which gives the same ranges from packed rows (the tests hold them to it).
 *
 * A sweep over the rows' boundaries with a max-heap of the row positions active there
 * (removed lazily); it assumes nothing about the file's order. Adjacent pieces won by
 * the same row are one range; pieces of different rows stay apart even if their values
 * are equal (merging equal values is the layer merge's job).
 */
export function flattenRows<V>(rows: readonly ValueRange<V>[]): ValueRange<V>[] {
  const events: Array<{ at: bigint; row: number; opens: boolean }> = [];
  rows.forEach((row, index) => {
    if (row.end < row.start) throw new Error(`row ${index + 1}: the range ends before it starts`);
    events.push({ at: row.start, row: index, opens: true }, { at: row.end + 1n, row: index, opens: false });
  });
  events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));

  const heap = new MaxHeap();
  const active = new Uint8Array(rows.length);
  const result: ValueRange<V>[] = [];
  let lastWinner = -1;
  let i = 0;
  while (i < events.length) {
    const at = (events[i] as (typeof events)[number]).at;
    for (; i < events.length && (events[i] as (typeof events)[number]).at === at; i++) {
      const event = events[i]!;
      if (event.opens) {
        active[event.row] = 1;
        heap.push(event.row);
      } else {
        active[event.row] = 0;
      }
    }
    while (heap.size > 0 && !active[heap.peek()]) heap.pop();
    if (heap.size === 0 || i === events.length) continue;
    const winner = heap.peek();
    const end = events[i]!.at - 1n;
    const last = result[result.length - 1];
    if (last && winner === lastWinner && last.end + 1n === at) {
      result[result.length - 1] = { start: last.start, end, value: last.value };
    } else {
      result.push({ start: at, end, value: rows[winner]!.value });
    }
    lastWinner = winner;
  }
  return result;
}

/**
 * flattenRows over packed rows, in file order (a PackedLayer whose ranges may overlap):
 * the same sweep, with addresses compared as words and nothing allocated per row but
 * its two events.
 */
export function flattenPacked(rows: PackedLayer): PackedLayer {
  const { words: W, length: n, starts, ends, values } = rows;
  // A row closes at its end + 1; a row reaching the family's last address never closes.
  const after = new Uint32Array(n * W);
  const endless = new Uint8Array(n);
  const next = new Uint32Array(W);
  for (let r = 0; r < n; r++) {
    if (compareAddresses(ends, r * W, starts, r * W, W) < 0) throw new Error(`row ${r + 1}: the range ends before it starts`);
    if (nextAddress(ends, r * W, next, W)) after.set(next, r * W);
    else endless[r] = 1;
  }
  // Event 2r opens row r, event 2r+1 closes it.
  const compare = (a: number, b: number): number => {
    const ra = a >>> 1;
    const rb = b >>> 1;
    const aEndless = (a & 1) === 1 && endless[ra] === 1;
    const bEndless = (b & 1) === 1 && endless[rb] === 1;
    if (aEndless || bEndless) return aEndless === bEndless ? 0 : aEndless ? 1 : -1;
    return compareAddresses(a & 1 ? after : starts, ra * W, b & 1 ? after : starts, rb * W, W);
  };
  const events = new Uint32Array(2 * n);
  for (let e = 0; e < events.length; e++) events[e] = e;
  events.sort(compare);

  const heap = new MaxHeap();
  const active = new Uint8Array(n);
  const out = new LayerBuilder(W, n);
  const end = new Uint32Array(W);
  let lastWinner = -1;
  let lastGroup = -2;
  let i = 0;
  for (let group = 0; i < events.length; group++) {
    const first = events[i] as number;
    for (; i < events.length && compare(events[i] as number, first) === 0; i++) {
      const event = events[i] as number;
      const row = event >>> 1;
      if ((event & 1) === 0) {
        active[row] = 1;
        heap.push(row);
      } else {
        active[row] = 0;
      }
    }
    while (heap.size > 0 && !active[heap.peek()]) heap.pop();
    if (heap.size === 0 || i === events.length) continue;
    const winner = heap.peek();
    // The piece runs to the next event's address - 1 (the family's last address when
    // that event is a row that never closes).
    const following = events[i] as number;
    if ((following & 1) === 1 && endless[following >>> 1] === 1) end.fill(0xffffffff);
    else previousAddress(following & 1 ? after : starts, (following >>> 1) * W, end, W);
    if (winner === lastWinner && lastGroup === group - 1) {
      out.extendLast(end, 0);
    } else {
      const at = (first >>> 1) * W; // an open event, or the close of a row that ends before the space does
      out.push(first & 1 ? after : starts, at, end, 0, values[winner] as number);
    }
    lastWinner = winner;
    lastGroup = group;
  }
  return out.layer();
}

/**
 * flattenPacked, done cluster by cluster for rows in address order.
 *
 * The data files list their rows by start, with few overlaps. A cluster is a run of
 * rows that each start no earlier than its first row and no later than the furthest end
 * so far; the next row starts past that end, so clusters cover disjoint, increasing
 * spans and flattening each alone gives what flattening all would. A row alone is its
 * own range; only clusters of several rows are swept. Rows out of order (a row starting
 * before its cluster) are flattened whole.
 */
export function flattenPackedInClusters(rows: PackedLayer): PackedLayer {
  const { words: W, length: n, starts, ends, values } = rows;
  const out = new LayerBuilder(W, n);
  let i = 0;
  while (i < n) {
    let furthest = i; // the row with the furthest end so far
    let j = i + 1;
    for (; j < n; j++) {
      if (compareAddresses(starts, j * W, ends, furthest * W, W) > 0) break;
      if (compareAddresses(starts, j * W, starts, i * W, W) < 0) return flattenPacked(rows);
      if (compareAddresses(ends, j * W, ends, furthest * W, W) > 0) furthest = j;
    }
    if (j === i + 1) {
      if (compareAddresses(ends, i * W, starts, i * W, W) < 0) throw new Error(`row ${i + 1}: the range ends before it starts`);
      out.push(starts, i * W, ends, i * W, values[i] as number);
    } else {
      const cluster = flattenPacked(sliceLayer(rows, i, j));
      for (let k = 0; k < cluster.length; k++) out.push(cluster.starts, k * W, cluster.ends, k * W, cluster.values[k] as number);
    }
    i = j;
  }
  return out.layer();
}

/** Writes the address at `from`[at…] - 1 into `into` (the address is not 0). */
function previousAddress(from: Uint32Array, at: number, into: Uint32Array, words: number): void {
  let borrow = true;
  for (let w = words - 1; w >= 0; w--) {
    const word = from[at + w] as number;
    if (borrow) {
      into[w] = word === 0 ? 0xffffffff : word - 1;
      borrow = word === 0;
    } else {
      into[w] = word;
    }
  }
}

/** A binary max-heap of row positions. */
class MaxHeap {
  private readonly items: number[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): number {
    return this.items[0] as number;
  }

  push(value: number): void {
    const items = this.items;
    items.push(value);
    let child = items.length - 1;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if ((items[parent] as number) >= value) break;
      items[child] = items[parent] as number;
      child = parent;
    }
    items[child] = value;
  }

  pop(): void {
    const items = this.items;
    const last = items.pop() as number;
    if (items.length === 0) return;
    let parent = 0;
    for (;;) {
      let child = parent * 2 + 1;
      if (child >= items.length) break;
      if (child + 1 < items.length && (items[child + 1] as number) > (items[child] as number)) child++;
      if ((items[child] as number) <= last) break;
      items[parent] = items[child] as number;
      parent = child;
    }
    items[parent] = last;
  }
}
