import { characterCount, printable } from "../access/plain-text.ts";
import { ApiError } from "../errors/api-error.ts";
import type { CorrectionTable } from "../corrections/correction-table.ts";
import type { RangeIndex } from "../index/range-index.ts";
import { checkAsn } from "./asn-number.ts";
import { asnIndexOf, type AsnIndex } from "./asn-index.ts";
import { CorrectedAsns } from "./corrected-asns.ts";

/** The longest search text, in characters (code points). */
export const MAX_QUERY_CHARACTERS = 64;

/** An answer's JSON as UTF-8, with the version of the data that answered. */
export interface AsnAnswer {
  readonly body: Uint8Array;
  readonly dataVersion: string;
}

/**
 * Answers by AS number and searches AS names (CONTRACT §14) from the current data set.
 * It never sees a request: the HTTP layer and the CLI hand it strings and get JSON or an
 * ApiError back, so both answer the same bytes.
 *
 * Answers for one data set and one set of corrections never change, so the last ones
 * are kept (bounded in count and bytes): the large ASes' answers run to a few hundred
 * KiB, and putting one together takes milliseconds. A reload, or a change to the
 * corrections that touches an AS answer, starts the cache again.
 */
export class AsnService {
  /** What the cached answers were made from: the AS index, or the corrected answers over it. */
  private cacheFor: AsnIndex | CorrectedAsns | undefined;
  private readonly cache = new Map<number, AsnAnswer>();
  private cachedBytes = 0;

  /**
   * @param currentIndex returns the index to use now; a reload swaps what it returns.
   * @param currentCorrections returns the local corrections lookups answer with now
   *   (CONTRACT §15), which the AS answers follow; none by default.
   */
  constructor(
    private readonly currentIndex: () => RangeIndex,
    private readonly currentCorrections: () => CorrectionTable | null = () => null,
  ) {}

  /** What answers now: the AS index of the current data, with the current corrections over it when any changes an AS answer. */
  private async answering(): Promise<{ asns: AsnIndex | CorrectedAsns; dataVersion: string }> {
    const index = await this.asnIndex();
    const corrections = this.currentCorrections();
    const corrected = corrections === null ? null : CorrectedAsns.over(index, corrections);
    return { asns: corrected ?? index, dataVersion: index.index.info.dataVersion };
  }

  /**
   * The AS index of the current data. A server's main thread has it built (on a loader
   * thread) once it answers and hands it to the worker threads (LiveIndex.buildAsnIndex,
   * serve/index-loader.ts); a worker thread asked
   * before it arrives waits for it (at most WAIT_FOR_MAIN_MS) rather than build a copy of
   * its own, so a server has one copy even when AS requests come in at start-up. The main
   * thread, the CLI and tests build it on the spot.
   */
  private async asnIndex(): Promise<AsnIndex> {
    let index = this.currentIndex();
    if (index.image.asn === undefined && !Bun.isMainThread) {
      const deadline = performance.now() + WAIT_FOR_MAIN_MS;
      while (index.image.asn === undefined && performance.now() < deadline) {
        await Bun.sleep(WAIT_STEP_MS);
        index = this.currentIndex();
      }
    }
    return asnIndexOf(index);
  }

  /**
   * Checks the AS text: its number, or an ApiError (invalid_asn, asn_not_public) that
   * costs nothing. Null: a path segment that is not valid percent-encoding.
   */
  check(text: string | null | undefined): number {
    if (typeof text !== "string") throw new ApiError("invalid_asn", "the AS number in the path is not valid percent-encoded text");
    const checked = checkAsn(text);
    if (checked.ok) return checked.asn;
    if (checked.code === "invalid_asn") {
      throw new ApiError("invalid_asn", `"${shorten(text)}" is not an AS number: write 0–4294967295 in decimal, alone or after AS (13335 or AS13335)`);
    }
    throw new ApiError("asn_not_public", `AS${checked.asn} is not a public AS number (${checked.reason})`, { reason: checked.reason });
  }

  /** The AsnResult JSON of a checked AS number. */
  async answer(asn: number): Promise<AsnAnswer> {
    const { asns, dataVersion } = await this.answering();
    if (this.cacheFor !== asns) {
      this.cacheFor = asns;
      this.cache.clear();
      this.cachedBytes = 0;
    }
    const cached = this.cache.get(asn);
    if (cached) {
      // Most recently used last: the first entry is the one to drop.
      this.cache.delete(asn);
      this.cache.set(asn, cached);
      return cached;
    }
    const answer = { body: asns.resultJson(asn), dataVersion };
    if (answer.body.length <= CACHE_BYTES / 2) {
      // A large answer is a view of a larger buffer: the cache keeps its bytes alone.
      const body = answer.body.byteLength === answer.body.buffer.byteLength ? answer.body : answer.body.slice();
      this.cache.set(asn, { body, dataVersion: answer.dataVersion });
      this.cachedBytes += answer.body.length;
      for (const [key, old] of this.cache) {
        if (this.cache.size <= CACHE_ENTRIES && this.cachedBytes <= CACHE_BYTES) break;
        this.cache.delete(key);
        this.cachedBytes -= old.body.length;
      }
    }
    return answer;
  }

  /**
   * Refuses a search text that is missing, given more than once, empty or longer than
   * MAX_QUERY_CHARACTERS. `texts`: every value of `q` in the request, or the one text.
   * `name`: what the caller gave the text as, which the detail names: the API's `q`, the
   * CLI's `--search` (a CLI user has no `q` to look for).
   */
  checkQuery(texts: string | readonly string[] | undefined, name = "q"): string {
    const all = texts === undefined ? [] : typeof texts === "string" ? [texts] : texts;
    if (all.length > 1) throw new ApiError("invalid_request", `give ${name} once`);
    const text = all[0];
    if (text === undefined) throw new ApiError("invalid_request", "give the text to search for as ?q=TEXT (1 to 64 characters)");
    const characters = characterCount(text);
    if (characters < 1 || characters > MAX_QUERY_CHARACTERS) {
      throw new ApiError("invalid_request", `${name}: the search text has ${characters} characters; it must have 1 to ${MAX_QUERY_CHARACTERS}`);
    }
    return text;
  }

  /** The search's JSON, `{"results":[…]}`, for a checked text. */
  async search(text: string): Promise<AsnAnswer> {
    const { asns, dataVersion } = await this.answering();
    return { body: encoder.encode(JSON.stringify({ results: asns.search(text) })), dataVersion };
  }
}

/** How long a worker thread waits for the main thread's AS index before it builds its own, and how often it looks. */
const WAIT_FOR_MAIN_MS = 5000;
const WAIT_STEP_MS = 10;

/** At most this many answers are kept, and at most this many bytes of them (one answer: half at most, which the largest AS of the default data, 173 KiB, fits). */
const CACHE_ENTRIES = 256;
const CACHE_BYTES = 512 * 1024;

const encoder = new TextEncoder();

/** Keeps an echoed value readable: a detail line never carries a whole path, nor a control character (shown as `?`). */
function shorten(value: string): string {
  const shown = printable(value);
  return shown.length <= 64 ? shown : `${shown.slice(0, 61)}...`;
}
