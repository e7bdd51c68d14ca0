import type { ValueRange } from "./ranges.ts";

/**
 * Flattens the rows of one source file into disjoint ranges, sorted by start, by the
 * rule of CONTRACT §7: where rows overlap, the row that comes later in the file wins for
 * the addresses it covers.
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
