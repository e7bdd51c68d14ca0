import { unzeroedBytes } from "./byte-writer.ts";

/**
 * Buffers for lookup answers, given back once an answer's bytes have been handed over
 * and lent again to later answers. A new buffer is memory the process has not touched
 * lately: a batch of 1,000 writes ~290 KB, which took 112 µs into a new buffer against
 * 75 µs into one written before (in process), and under load `serve` took 38 page
 * faults a batch of 1,000 with a new buffer each, 21 with these. A buffer never given
 * back is simply collected, so forgetting to give one back costs speed, never
 * correctness; giving one back while its bytes are still to be read would be the bug
 * (see LookupAnswer.release).
 *
 * Bounded in count and in bytes: under load about one buffer waits for each request in
 * flight, and an idle server keeps at most `maxBytes`.
 */
export class AnswerBuffers {
  private readonly free: Uint8Array[] = [];
  private freeBytes = 0;

  constructor(
    private readonly maxBuffers = 64,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  /** A buffer of at least `size` bytes, unzeroed: the one given back last that is large enough, or a new one. */
  take(size: number): Uint8Array {
    const free = this.free;
    for (let i = free.length - 1; i >= 0; i--) {
      const buffer = free[i] as Uint8Array;
      if (buffer.byteLength < size) continue;
      free[i] = free[free.length - 1] as Uint8Array;
      free.pop();
      this.freeBytes -= buffer.byteLength;
      return buffer;
    }
    return unzeroedBytes(size);
  }

  /** Takes a buffer back for later answers; nothing may read or write it after this. */
  give(buffer: Uint8Array): void {
    if (this.free.length >= this.maxBuffers || this.freeBytes + buffer.byteLength > this.maxBytes) return;
    this.free.push(buffer);
    this.freeBytes += buffer.byteLength;
  }

  /** Buffers kept, and their bytes. */
  get kept(): { buffers: number; bytes: number } {
    return { buffers: this.free.length, bytes: this.freeBytes };
  }
}
