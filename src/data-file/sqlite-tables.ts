import { closeSync, openSync, readSync, statSync } from "node:fs";

/** The first 16 bytes of every SQLite database file. */
const SQLITE_MAGIC = new TextEncoder().encode("SQLite format 3\0");
/** How many pages of sqlite_schema are read at most (iplookup's files: one for a data file, a few for a state file). */
const MAX_SCHEMA_PAGES = 256;

/**
 * The names of the tables a SQLite database file declares (SQLite's own, `sqlite_…`,
 * left out), read from the file's own bytes: its header and the pages of the
 * sqlite_schema b-tree, which is rooted on page 1. No SQLite connection is opened, so
 * nothing beside the file is made (a connection to a file in WAL mode makes its -wal
 * and -shm, and leaves them where it cannot remove them), and nothing else in the file
 * is read or trusted (SQLite refuses a schema whose tables' root pages lie past the end
 * of the file, which a file cut short has). What a -wal beside the file holds is not seen.
 *
 * Null when the file does not begin as a SQLite file does; throws when it does but its
 * schema's pages cannot be read as SQLite writes them.
 */
export function sqliteTableNames(path: string): string[] | null {
  const fd = openSync(path, "r");
  try {
    const header = readAt(fd, 0, 100);
    if (header.byteLength < SQLITE_MAGIC.byteLength || !SQLITE_MAGIC.every((byte, i) => header[i] === byte)) return null;
    if (header.byteLength < 100) throw new Error("its header is cut short");
    const sizeField = (header[16]! << 8) | header[17]!;
    const pageSize = sizeField === 1 ? 65_536 : sizeField;
    if (pageSize < 512 || pageSize > 65_536 || (pageSize & (pageSize - 1)) !== 0) throw new Error(`its page size (${sizeField}) is not one SQLite writes`);
    const usable = pageSize - header[20]!;
    if (usable < 480) throw new Error("its usable page size is below SQLite's least");
    const encoding = new DataView(header.buffer, header.byteOffset).getUint32(56);
    const decoder = new TextDecoder(encoding === 2 ? "utf-16le" : encoding === 3 ? "utf-16be" : "utf-8", { fatal: true });
    const names: string[] = [];
    const seen = new Set<number>();
    const walk = (number: number) => {
      if (seen.has(number) || seen.size >= MAX_SCHEMA_PAGES) throw new Error("its schema's pages form a loop, or too many");
      seen.add(number);
      const page = readAt(fd, (number - 1) * pageSize, pageSize);
      if (page.byteLength < pageSize) throw new Error(`its schema's page ${number} lies past the end of the file`);
      const view = new DataView(page.buffer, page.byteOffset, usable);
      const start = number === 1 ? 100 : 0;
      const kind = view.getUint8(start);
      const cells = view.getUint16(start + 3);
      if (kind === 0x05) {
        // An interior page: each cell a child page number (then a rowid), the right-most child after.
        for (let i = 0; i < cells; i++) walk(view.getUint32(view.getUint16(start + 12 + 2 * i)));
        walk(view.getUint32(start + 8));
      } else if (kind === 0x0d) {
        for (let i = 0; i < cells; i++) {
          const row = schemaRow(page.subarray(0, usable), view.getUint16(start + 8 + 2 * i), usable, decoder);
          if (row.type === "table" && !row.name.startsWith("sqlite_")) names.push(row.name);
        }
      } else {
        throw new Error(`its schema's page ${number} is not a table page`);
      }
    };
    walk(1);
    return names.sort();
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError) throw new Error("its schema's pages are malformed", { cause: error });
    throw error;
  } finally {
    closeSync(fd);
  }
}

/** What a path names when it is a SQLite file's companion: what kind, and the file's path. */
export interface SqliteCompanion {
  readonly kind: "write-ahead log" | "shared memory file" | "rollback journal";
  readonly main: string;
}

/**
 * Whether `path` names a companion of a SQLite file (its -wal, -shm or -journal), there
 * or not: a regular file is at the path without the suffix, and it begins as a SQLite
 * file does, or this user may not read it (a state file of another user's, mode 0600,
 * is still one whose -wal must not be replaced). Such a path is no place for another
 * file: a server's -wal is empty after each checkpoint, and SQLite takes what it finds
 * there for the file's own.
 */
export function sqliteCompanion(path: string): SqliteCompanion | null {
  const suffix = /-(wal|shm|journal)$/.exec(path);
  if (suffix === null) return null;
  const main = path.slice(0, -suffix[0].length);
  try {
    if (!statSync(main).isFile()) return null;
  } catch {
    return null;
  }
  let sqlite = true;
  try {
    sqlite = sqliteTableNames(main) !== null;
  } catch {
    // Schema pages unreadable: a SQLite file still. Not readable at all: taken for one.
  }
  if (!sqlite) return null;
  const kind = suffix[1] === "wal" ? "write-ahead log" : suffix[1] === "shm" ? "shared memory file" : "rollback journal";
  return { kind, main };
}

/**
 * The `type` and `name` of the sqlite_schema row in the leaf cell at `offset`: the first
 * two columns of its record, read from the part of the payload kept on the page (they
 * come first, so they are there even when the rest of the row overflows).
 * Out-of-bounds reads throw RangeError.
 */
function schemaRow(page: Uint8Array, offset: number, usable: number, decoder: TextDecoder): { type: string; name: string } {
  const [payload, afterSize] = varint(page, offset);
  const [, record] = varint(page, afterSize);
  // How much of a payload stays on a table leaf page (SQLite's file format, §1.6).
  const most = usable - 35;
  const least = Math.floor(((usable - 12) * 32) / 255) - 23;
  const spill = least + ((payload - least) % (usable - 4));
  const local = payload <= most ? payload : spill <= most ? spill : least;
  const end = record + local;
  if (end > page.byteLength) throw new RangeError("the cell runs past its page");
  const [headerSize, afterHeaderSize] = varint(page, record);
  let at = afterHeaderSize;
  let data = record + headerSize;
  const columns: string[] = [];
  while (columns.length < 2) {
    if (at >= record + headerSize) throw new RangeError("the record has fewer than two columns");
    const [serial, next] = varint(page, at);
    at = next;
    // A text column's serial type is odd and at least 13; anything else holds no name.
    const length = serial >= 13 && serial % 2 === 1 ? (serial - 13) / 2 : -1;
    if (length < 0 || data + length > end) throw new RangeError("a column is not text, or runs past the cell");
    columns.push(decoder.decode(page.subarray(data, data + length)));
    data += length;
  }
  return { type: columns[0]!, name: columns[1]! };
}

/** A SQLite varint at `offset`: its value and the offset after it. */
function varint(bytes: Uint8Array, offset: number): [number, number] {
  let value = 0;
  for (let i = 0; i < 9; i++) {
    if (offset + i >= bytes.byteLength) throw new RangeError("a varint runs past its page");
    const byte = bytes[offset + i]!;
    if (i === 8) return [value * 256 + byte, offset + 9];
    value = value * 128 + (byte & 0x7f);
    if (byte < 0x80) return [value, offset + i + 1];
  }
  throw new RangeError("unreachable");
}

function readAt(fd: number, position: number, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let read = 0;
  while (read < length) {
    const n = readSync(fd, bytes, read, length - read, position + read);
    if (n === 0) break;
    read += n;
  }
  return bytes.subarray(0, read);
}
