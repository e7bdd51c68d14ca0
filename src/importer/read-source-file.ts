import { closeSync, existsSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { familyFromFileName, readDelimitedPacked, type ByteSource } from "./delimited/read-delimited.ts";
import { detectFormat, type SourceFormat } from "./detect-format.ts";
import { isFeedFormat } from "./feeds/feed-entry.ts";
import { feedByteLimit, feedTooLarge, readFeedPacked } from "./feeds/read-feed.ts";
import { sampleOfFile } from "./fetch/unpack.ts";
import type { PackedPart } from "./join-parts.ts";
import { readMmdbPacked } from "./mmdb/read-mmdb.ts";
import type { Progress } from "./progress.ts";
import type { Family } from "./ranges.ts";
import type { FeedOptions } from "./source.ts";

/**
 * Reads one file of a source in its format (detected from its bytes when not given),
 * packed. Messages name it by `label` when given (a download, a file from an archive);
 * the family of integer addresses may still come from the file's own name. A name's
 * family is for integer addresses only (docs/data.md): address text tells its own, so a
 * file named …-ipv6.csv may hold IPv4 text; `options.family` (`--family`) binds every row.
 */
export async function readSourceFile(
  file: string,
  options: { format?: SourceFormat; family?: Family; label?: string; feed?: FeedOptions },
  progress?: Progress,
): Promise<{ part: PackedPart; format: SourceFormat }> {
  const name = options.label ?? file;
  if (!existsSync(file)) throw new Error(`${name}: no such file`);
  if (!statSync(file).isFile()) throw new Error(`${name}: not a file`);
  // The format is told from the file's head and tail before it is read: what is no
  // data file (a gigabyte of zeros that unpacked within the bounds) is refused without
  // being loaded. An MMDB file is read whole (its tree is walked at random); a delimited
  // file a megabyte at a time.
  const format = options.format ?? detectFormat(sampleOfFile(file), name);
  const began = performance.now();
  const report = (done: number, total: number) => progress?.update(`reading ${name}`, done, total);
  const integerFamily = options.family === undefined && options.label !== undefined ? familyFromFileName(file) : undefined;
  if (!isFeedFormat(format) && (options.feed?.signal !== undefined || options.feed?.service !== undefined)) {
    throw new Error(`${name}: --signal and --service describe a feed of addresses (a list, a geofeed, a cloud provider's ranges); this file is ${format}`);
  }
  let part: PackedPart;
  if (format === "mmdb") {
    part = readMmdbPacked(await Bun.file(file).bytes(), name, report);
  } else if (isFeedFormat(format)) {
    // Feeds are read whole: one larger than its bound is refused before it is read.
    const size = statSync(file).size;
    if (size > feedByteLimit(format)) throw feedTooLarge(name, size, feedByteLimit(format));
    part = readFeedPacked(await Bun.file(file).bytes(), { format, file: name, feed: options.feed });
  } else {
    const source = openByteSource(file);
    try {
      part = readDelimitedPacked(source, { format, file: name, family: options.family, integerFamily }, report);
    } finally {
      source.close();
    }
  }
  progress?.line(`read ${name} (${format}) in ${((performance.now() - began) / 1000).toFixed(1)} s`);
  return { part, format };
}

/** A file as a ByteSource: each window read into one buffer, reused. */
function openByteSource(file: string): ByteSource & { close(): void } {
  const fd = openSync(file, "r");
  const length = fstatSync(fd).size;
  let buffer = new Uint8Array(0);
  return {
    length,
    window(from, size) {
      if (buffer.length < size) buffer = new Uint8Array(size);
      let done = 0;
      while (done < size) {
        const read = readSync(fd, buffer, done, size - done, from + done);
        if (read === 0) break;
        done += read;
      }
      return buffer.subarray(0, done);
    },
    close() {
      closeSync(fd);
    },
  };
}
