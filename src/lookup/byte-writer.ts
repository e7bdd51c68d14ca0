/**
 * A growing byte buffer for response bodies. Writing bytes directly is much cheaper than
 * building a long string out of many small pieces and having it encoded afterwards:
 * for a batch of 1,000 results, resolving and encoding such a string cost more than
 * the lookups themselves.
 */
import { groupsAndZeroRun } from "../address/parse.ts";

/**
 * Pieces up to this many bytes are copied in a loop, longer ones with TypedArray#set:
 * measured in process, the loop wins below about 32 bytes (the constant text of a
 * result), set from about 48 (a record's members, ~110 bytes with the default data,
 * copy in a third of the loop's time).
 */
const SMALL_COPY = 32;
const COPY_BELOW = 4096;
const GROUPS = new Uint16Array(8);
const HEX_DIGITS = new TextEncoder().encode("0123456789abcdef");
/** An octet's decimal digits as character codes, hundreds in bits 16–23, tens 8–15, ones 0–7: no division per address. */
const OCTET_DIGITS = Uint32Array.from({ length: 256 }, (_, octet) => ((48 + ((octet / 100) | 0)) << 16) | ((48 + (((octet / 10) | 0) % 10)) << 8) | (48 + (octet % 10)));

export class ByteWriter {
  private bytes: Uint8Array;
  private length = 0;

  /** @param start the buffer to write into first, unzeroed (see AnswerBuffers): a new one by default */
  constructor(capacity: number, start?: Uint8Array) {
    this.bytes = start ?? unzeroedBytes(Math.max(64, capacity));
  }

  /** Appends text that is ASCII only (addresses, numbers, JSON punctuation). */
  ascii(text: string): void {
    this.reserve(text.length);
    const bytes = this.bytes;
    let at = this.length;
    for (let i = 0; i < text.length; i++) bytes[at++] = text.charCodeAt(i);
    this.length = at;
  }

  /** Appends an IPv4 address (unsigned 32-bit) as a dotted quad. */
  ipv4(value: number): void {
    this.reserve(15);
    const bytes = this.bytes;
    let at = this.length;
    for (let shift = 24; shift >= 0; shift -= 8) {
      const octet = (value >>> shift) & 0xff;
      const digits = OCTET_DIGITS[octet] as number;
      if (octet >= 100) bytes[at++] = digits >>> 16;
      if (octet >= 10) bytes[at++] = (digits >>> 8) & 0xff;
      bytes[at++] = digits & 0xff;
      if (shift > 0) bytes[at++] = 46; // .
    }
    this.length = at;
  }

  /** Appends the RFC 5952 text of 128 bits given as four 32-bit words (as ipv6Text writes it). */
  ipv6(words: ArrayLike<number>): void {
    this.reserve(39);
    const groups = GROUPS;
    const [zerosStart, zerosLength] = groupsAndZeroRun(words, groups);
    const bytes = this.bytes;
    let at = this.length;
    let separate = false;
    for (let g = 0; g < 8; g++) {
      if (g === zerosStart) {
        bytes[at++] = 58; // :
        bytes[at++] = 58;
        separate = false;
        g += zerosLength - 1;
        continue;
      }
      if (separate) bytes[at++] = 58;
      const group = groups[g] as number;
      for (let shift = 12; shift >= 0; shift -= 4) {
        if (shift > 0 && group >>> shift === 0) continue; // no leading zeros
        bytes[at++] = HEX_DIGITS[(group >>> shift) & 15] as number;
      }
      separate = true;
    }
    this.length = at;
  }

  /** Appends encoded bytes. */
  raw(chunk: Uint8Array): void {
    const size = chunk.byteLength;
    this.reserve(size);
    if (size > SMALL_COPY) {
      this.bytes.set(chunk, this.length);
      this.length += size;
      return;
    }
    const bytes = this.bytes;
    let at = this.length;
    for (let i = 0; i < size; i++) bytes[at++] = chunk[i] as number;
    this.length = at;
  }

  /** What was written, as a view of the buffer written into (`buffer`), not a copy; the writer must not be used after. */
  written(): Uint8Array {
    return this.bytes.subarray(0, this.length);
  }

  /** The buffer written into: after the writer grew, not the one it started with. */
  get buffer(): Uint8Array {
    return this.bytes;
  }

  /** What was written; the writer must not be used after. */
  finish(): Uint8Array {
    if (this.length === this.bytes.byteLength) return this.bytes;
    // A view costs a fixed ~200 ns (the buffer behind it is made real), a copy ~0.1 ns a
    // byte: copy small bodies, view large ones.
    return this.length <= COPY_BELOW ? this.bytes.slice(0, this.length) : this.bytes.subarray(0, this.length);
  }

  private reserve(extra: number): void {
    if (this.length + extra <= this.bytes.byteLength) return;
    const grown = unzeroedBytes(Math.max(this.bytes.byteLength * 2, this.length + extra));
    grown.set(this.bytes.subarray(0, this.length));
    this.bytes = grown;
  }
}

/**
 * A buffer whose bytes are left as the allocator gives them, not zeroed first: zeroing
 * the ~290 KB of a batch of 1,000 cost a twentieth of its CPU, and every byte the writer
 * hands out it has written (buffers up to COPY_BELOW are zeroed still: that costs less
 * than the wrapping). What lies past `length` is stale memory, other answers' bytes
 * among it, so a view that finish() or written() returns must never be widened to the
 * buffer behind it (its `.buffer`).
 */
export function unzeroedBytes(size: number): Uint8Array {
  if (size <= COPY_BELOW) return new Uint8Array(size);
  const buffer = Buffer.allocUnsafeSlow(size);
  return new Uint8Array(buffer.buffer, buffer.byteOffset, size);
}
