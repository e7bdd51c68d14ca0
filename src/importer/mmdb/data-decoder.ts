/**
 * The MaxMind DB data format (maps, arrays, strings, numbers, pointers), decoded with
 * bounds on the work: a pointer lets any number of maps and arrays refer to one piece of
 * data, so a file of a few hundred bytes (arrays of 16 pointers to the array below,
 * 8 levels deep) would decode into billions of values. Values are what mmdb-lib's
 * decoder gives for the same bytes, except that what it would accept and the format
 * does not allow (a map key that is not a string, a double that is not 8 bytes) is
 * refused.
 *
 * Work is counted in bytes read, pointers and repeated reads of shared data included:
 *
 * - one decode (a record, or the metadata) may read at most RECORD_READ_LIMIT bytes:
 *   records of real databases read a few hundred, and what one holds in memory is at
 *   most a small multiple of what was read for it;
 * - all decodes together may read at most FILE_READ_ALLOWANCE bytes plus
 *   FILE_READ_FACTOR times the section's size. Each record is decoded once, so a
 *   database reads its data section about once, plus what its records share through
 *   pointers (names of countries and continents: about ten times over in GeoIP2 City);
 * - maps and arrays nest at most MAX_DEPTH deep, a pointer counting as a level (a
 *   pointer that leads back to itself ends there, not in a stack overflow).
 *
 * Strings and numbers at pointer targets are kept and shared (keys and repeated names
 * are pointers in most files); maps and arrays are not (a record is decoded once).
 */
export const RECORD_READ_LIMIT = 2 * 1024 * 1024;
export const FILE_READ_ALLOWANCE = 64 * 1024 * 1024;
export const FILE_READ_FACTOR = 64;
export const MAX_DEPTH = 64;

/** Data that cannot be decoded, or that runs past the section's end. */
export class DecodeError extends Error {}

/** Data that decodes into more than the limits allow. */
export class DecodeLimitError extends Error {}

const POINTER_BASE = [0, 2048, 526336, 0];
const TYPES = ["extended", "pointer", "utf8_string", "double", "bytes", "uint16", "uint32", "map", "int32", "uint64", "uint128", "array", "container", "end_marker", "boolean", "float"];

export class DataDecoder {
  private readonly buffer: Buffer;
  /** Scalars decoded at pointer targets, by offset. */
  private readonly shared = new Map<number, unknown>();
  /** Bytes read by all decodes so far, and by the current one. */
  private readTotal = 0;
  private readNow = 0;
  private readonly recordLimit: number;
  private readonly fileLimit: number;
  /** Where the value last decoded ends. */
  private position = 0;

  /**
   * `bytes[start … end)` is the section; pointers count from `start`. `what` names it
   * in errors ("the data section", "the metadata"). `limits` replaces the defaults
   * (for tests).
   */
  constructor(
    bytes: Uint8Array,
    private readonly start: number,
    private readonly end: number,
    private readonly what: string,
    limits: { readonly record?: number; readonly fileAllowance?: number } = {},
  ) {
    this.buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.recordLimit = limits.record ?? RECORD_READ_LIMIT;
    this.fileLimit = (limits.fileAllowance ?? FILE_READ_ALLOWANCE) + FILE_READ_FACTOR * Math.max(0, end - start);
  }

  /** Bytes read by every decode so far. */
  get bytesRead(): number {
    return this.readTotal;
  }

  /**
   * Decodes the value at `offset` bytes into the section. Throws DecodeError for data
   * that cannot be decoded (or runs past the section's end), DecodeLimitError past the
   * limits above.
   */
  decode(offset: number): unknown {
    this.readNow = 0;
    return this.value(this.start + offset, 0);
  }

  private value(at: number, depth: number): unknown {
    if (depth > MAX_DEPTH) throw new DecodeError(`is nested deeper than ${MAX_DEPTH} levels (maps, arrays or pointers that lead back to themselves?)`);
    const begin = at;
    const control = this.byte(at++);
    let type = control >> 5;
    if (type === 1) {
      // A pointer: 001SSVVV, then SS+1 bytes.
      const size = (control >> 3) & 3;
      this.need(at, size + 1);
      let packed: number;
      if (size === 0) packed = ((control & 7) << 8) | this.buffer[at]!;
      else if (size === 1) packed = ((control & 7) << 16) | this.buffer.readUInt16BE(at);
      else if (size === 2) packed = (control & 7) * 0x1000000 + this.buffer.readUIntBE(at, 3);
      else packed = this.buffer.readUInt32BE(at);
      const after = at + size + 1;
      this.spend(after - begin);
      const target = this.start + POINTER_BASE[size]! + packed;
      let value = this.shared.get(target);
      if (value === undefined) {
        value = this.value(target, depth + 1);
        if (typeof value !== "object") this.shared.set(target, value);
      }
      this.position = after;
      return value;
    }
    if (type === 0) {
      type = 7 + this.byte(at++);
      if (type < 8) throw new DecodeError(`cannot be decoded (an extended type of 0 at byte ${begin - this.start})`);
    }
    let size = control & 0x1f;
    if (size >= 29) {
      const extra = size - 28;
      this.need(at, extra);
      size = size === 29 ? 29 + this.buffer[at]! : size === 30 ? 285 + this.buffer.readUInt16BE(at) : 65821 + this.buffer.readUIntBE(at, 3);
      at += extra;
    }
    switch (type) {
      case 7: {
        this.spend(at - begin);
        // No prototype: a key "__proto__" is a key like any other, not the map's prototype.
        const map = Object.create(null) as Record<string, unknown>;
        for (let i = 0; i < size; i++) {
          const key = this.value(at, depth + 1);
          if (typeof key !== "string") throw new DecodeError(`cannot be decoded (a map key that is not a string at byte ${at - this.start})`);
          const item = this.value(this.position, depth + 1);
          at = this.position;
          map[key] = item;
        }
        this.position = at;
        return map;
      }
      case 11: {
        this.spend(at - begin);
        const array: unknown[] = []; // not new Array(size): a size is only a claim
        for (let i = 0; i < size; i++) {
          array.push(this.value(at, depth + 1));
          at = this.position;
        }
        this.position = at;
        return array;
      }
      case 14: // boolean: the size is the value
        this.spend(at - begin);
        this.position = at;
        return size !== 0;
    }
    this.need(at, size);
    this.spend(at + size - begin);
    this.position = at + size;
    const buffer = this.buffer;
    switch (type) {
      case 2:
        return buffer.toString("utf8", at, at + size);
      case 3:
        if (size !== 8) throw new DecodeError(`cannot be decoded (a double of ${size} bytes at byte ${begin - this.start})`);
        return buffer.readDoubleBE(at);
      case 4:
        return buffer.subarray(at, at + size);
      case 5:
      case 6:
        if (size > 4) throw new DecodeError(`cannot be decoded (a ${TYPES[type]} of ${size} bytes at byte ${begin - this.start})`);
        return size === 0 ? 0 : buffer.readUIntBE(at, size);
      case 8:
        if (size > 4) throw new DecodeError(`cannot be decoded (an int32 of ${size} bytes at byte ${begin - this.start})`);
        return size === 0 ? 0 : size < 4 ? buffer.readUIntBE(at, size) : buffer.readInt32BE(at);
      case 9:
      case 10: {
        if (size > 16) throw new DecodeError(`cannot be decoded (a ${TYPES[type]} of ${size} bytes at byte ${begin - this.start})`);
        let integer = 0n;
        for (let i = 0; i < size; i++) integer = (integer << 8n) | BigInt(buffer[at + i]!);
        return integer;
      }
      case 15:
        if (size !== 4) throw new DecodeError(`cannot be decoded (a float of ${size} bytes at byte ${begin - this.start})`);
        return buffer.readFloatBE(at);
    }
    throw new DecodeError(`cannot be decoded (type ${TYPES[type] ?? type} at byte ${begin - this.start})`);
  }

  private byte(at: number): number {
    this.need(at, 1);
    return this.buffer[at]!;
  }

  /** Throws when `count` bytes from `at` run past the section. */
  private need(at: number, count: number): void {
    if (at < this.start || at + count > this.end) throw new DecodeError(`runs past ${this.what}`);
  }

  private spend(bytes: number): void {
    this.readNow += bytes;
    this.readTotal += bytes;
    if (this.readNow > this.recordLimit) {
      throw new DecodeLimitError(
        `decodes to more than ${this.recordLimit.toLocaleString("en-US")} bytes of reads (maps or arrays that point at the same data over and over); refused as damaged or hostile`,
      );
    }
    if (this.readTotal > this.fileLimit) {
      throw new DecodeLimitError(
        `${this.what} took more than ${this.fileLimit.toLocaleString("en-US")} bytes of reads to decode, ${FILE_READ_FACTOR} times its size and more (records that point at the same data over and over); refused as damaged or hostile`,
      );
    }
  }
}
