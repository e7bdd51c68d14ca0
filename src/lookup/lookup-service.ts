import type { Address } from "../address/address.ts";
import { checkAddress, publicAddress } from "../address/check.ts";
import { ApiError, addressError, type EntryError } from "../errors/api-error.ts";
import type { IndexHit, RangeIndex } from "../index/range-index.ts";
import { correctedResult, narrowHit } from "../corrections/apply-correction.ts";
import type { CorrectionTable } from "../corrections/correction-table.ts";
import { toLookupResult, type LookupResult } from "./lookup-result.ts";
import { AnswerBuffers } from "./answer-buffers.ts";
import { ByteWriter } from "./byte-writer.ts";
import { writeResult } from "./result-json.ts";
import { FIRST_RESULT_BYTES, nextResultBytes } from "./result-size.ts";

const encoder = new TextEncoder();

/**
 * A lookup's JSON answer. Its body is a view of a buffer lent by the service (see
 * AnswerBuffers), valid until `release()`: call it once the bytes are handed over (sent,
 * or copied), and the buffer serves a later answer. Never calling it is safe.
 */
export interface LookupAnswer {
  readonly body: Uint8Array;
  readonly dataVersion: string;
  release(): void;
}

/**
 * Looks addresses up in the current range index. It never sees a request: the HTTP
 * layer hands it strings and gets results or an ApiError back.
 */
export class LookupService {
  /** Bytes set aside for each result of the next answer (see result-size.ts). */
  private resultBytes = FIRST_RESULT_BYTES;
  private readonly buffers = new AnswerBuffers();
  /**
   * The hits of the answer being written, filled by its first pass and emptied by its
   * second (so an old index's records are not kept alive after a reload).
   */
  private readonly hits: Array<IndexHit | null> = [];

  /**
   * @param currentIndex returns the index to use now; a reload swaps what it returns.
   * @param currentCorrections returns the local corrections to lay over the answers
   *   (CONTRACT §15), or null when there are none: then a lookup costs what it did
   *   without corrections, one check a request.
   */
  constructor(
    private readonly currentIndex: () => RangeIndex,
    private readonly currentCorrections: () => CorrectionTable | null = () => null,
  ) {}

  /**
   * Checks every entry and returns the parsed addresses, or throws one ApiError that
   * lists every bad entry, so the caller can correct the input in one go.
   */
  resolve(texts: readonly string[]): Address[] {
    const addresses: Address[] = new Array(texts.length);
    let errors: EntryError[] | undefined;
    for (let i = 0; i < texts.length; i++) {
      const value = texts[i] as string;
      const address = publicAddress(value);
      if (address !== null) {
        addresses[i] = address;
        continue;
      }
      // Refused: checkAddress says why (it accepts what publicAddress accepts, no more;
      // the address tests hold the two together, so the first branch is only a guard).
      const checked = checkAddress(value);
      if (checked.ok) {
        addresses[i] = checked.address;
      } else {
        (errors ??= []).push(
          checked.code === "address_not_public"
            ? { index: i, value, code: checked.code, reason: checked.reason }
            : { index: i, value, code: checked.code },
        );
      }
    }
    if (errors) throw addressError(errors, texts.length);
    return addresses;
  }

  /** Refuses a batch longer than the plan allows, before any address is looked at. */
  checkBatchSize(count: number, maxBatchSize: number): void {
    if (count > maxBatchSize) {
      throw new ApiError(
        "batch_too_large",
        `the batch has ${count} entries; this key's plan allows at most ${maxBatchSize}`,
        { max_batch_size: maxBatchSize },
      );
    }
  }

  /** Looks up already checked addresses, in order; one index is used for the whole list. */
  lookup(addresses: readonly Address[]): LookupResult[] {
    const index = this.currentIndex();
    const corrections = this.currentCorrections();
    const notFound = index.notFoundRecord;
    return addresses.map((address) => {
      const hit = index.lookup(address);
      if (corrections === null) return toLookupResult(address, hit, notFound);
      const at = corrections.at(address);
      if (at.fields !== null) return correctedResult(address, hit, index, { ...at, fields: at.fields });
      return toLookupResult(address, hit && narrowHit(hit, address, at.minPrefix), notFound);
    });
  }

  /**
   * The HTTP answer's JSON as UTF-8 bytes: one LookupResult for a single lookup, or
   * `{"results":[…]}` for a batch (see result-json.ts), with the version of the data
   * that answered. The bytes are in a lent buffer: see LookupAnswer.
   */
  lookupJson(addresses: readonly Address[], asBatch: boolean): LookupAnswer {
    const index = this.currentIndex();
    const corrections = this.currentCorrections();
    const capacity = addresses.length * this.resultBytes + 16;
    const out = new ByteWriter(capacity, this.buffers.take(capacity));
    // Two passes, every search first and then every write: the same work as one pass
    // that searched and wrote each address in turn, measured cheaper (wrk, paired runs
    // on one core, 12 pairs each: one pass took 1.085× the CPU a request of two for
    // batches of 1,000, 1.06× for 100). A likely reason, not measured apart: searches of
    // different addresses do not wait on each other, so the processor overlaps their
    // reads of memory, where a search between two writes waited on its own.
    const hits = this.hits;
    for (let i = 0; i < addresses.length; i++) hits[i] = index.lookup(addresses[i] as Address);
    if (asBatch) out.ascii('{"results":[');
    for (let i = 0; i < addresses.length; i++) {
      const address = addresses[i] as Address;
      if (i > 0) out.ascii(",");
      const hit = hits[i] as IndexHit | null;
      hits[i] = null;
      if (corrections === null) {
        writeResult(out, address, hit, index.notFoundBytes);
        continue;
      }
      // With corrections: an address no correction covers keeps the fast writer, its
      // network narrowed to the corrections' edges; a corrected one takes the general
      // path, its result built as an object and serialized (as rare as corrections are).
      const at = corrections.at(address);
      if (at.fields === null) writeResult(out, address, hit && narrowHit(hit, address, at.minPrefix), index.notFoundBytes);
      else out.raw(encoder.encode(JSON.stringify(correctedResult(address, hit, index, { ...at, fields: at.fields }))));
    }
    if (asBatch) out.ascii("]}");
    const body = out.written();
    this.resultBytes = nextResultBytes(this.resultBytes, body.byteLength, addresses.length);
    const buffer = out.buffer;
    const buffers = this.buffers;
    let lent = true;
    return {
      body,
      dataVersion: index.info.dataVersion,
      release() {
        if (!lent) return;
        lent = false;
        buffers.give(buffer);
      },
    };
  }
}
