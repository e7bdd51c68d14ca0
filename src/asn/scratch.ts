/**
 * Working memory for building the AS index: typed arrays cut from a few large buffers,
 * all dropped together once the build is done. Arrays of a few hundred KiB allocated one
 * by one stayed with the allocator after they were freed (about 7 MiB of resident memory
 * for the default data's build, kept for the life of the server); a buffer of several
 * MiB is given back to the system when it is freed.
 */
export class Scratch {
  private chunk = new ArrayBuffer(0);
  private used = 0;

  f64(length: number): Float64Array {
    const at = this.take(length * 8);
    return new Float64Array(this.chunk, at, length);
  }

  i32(length: number): Int32Array {
    const at = this.take(length * 4);
    return new Int32Array(this.chunk, at, length);
  }

  u32(length: number): Uint32Array {
    const at = this.take(length * 4);
    return new Uint32Array(this.chunk, at, length);
  }

  u8(length: number): Uint8Array {
    const at = this.take(length);
    return new Uint8Array(this.chunk, at, length);
  }

  /** Where `bytes` fresh (zeroed) bytes start in the current chunk, 8-aligned; a new chunk when it is full. */
  private take(bytes: number): number {
    const size = Math.ceil(bytes / 8) * 8;
    if (this.used + size > this.chunk.byteLength) {
      this.chunk = new ArrayBuffer(Math.max(CHUNK_BYTES, size));
      this.used = 0;
    }
    const at = this.used;
    this.used += size;
    return at;
  }
}

const CHUNK_BYTES = 4 * 1024 * 1024;
