import type { NetworkRecord } from "../index/network-record.ts";
import { privacyOf, PrivacyTable, SIGNALS, uncoveredPrivacy, type Privacy, type Signal } from "../index/privacy.ts";
import { BASE_FIELDS, inFieldOrder, type FieldValue, type FieldValues, type RecordField } from "../index/record-fields.ts";
import { continentName } from "./continent-names.ts";
import { countryName } from "./country-names.ts";
import type { LayerValues } from "./merge.ts";
import { finishHash, HASH_SEED, hashValue, RecordIds } from "./record-ids.ts";

/**
 * Names are derived from codes, never taken from a source, so one code has one name
 * in every data set (CLDR's English names; see country-names.ts).
 */
const DERIVED: Partial<Record<RecordField, { from: RecordField; name: (code: string) => string | null }>> = {
  country: { from: "country_code", name: countryName },
  continent: { from: "continent_code", name: continentName },
};

/**
 * Whether a field is derived by the importer, never read from a source as it is: a name
 * from a code, or `privacy`, put together from every signal source (see privacyAt).
 */
export function isDerivedField(field: RecordField): boolean {
  return DERIVED[field] !== undefined || field === "privacy";
}

/** The result fields of a data set built from sources with these fields: `privacy` always, last. */
export function dataSetFields(sourceFields: ReadonlyArray<readonly RecordField[]>): RecordField[] {
  const fields = new Set<RecordField>([...BASE_FIELDS, "privacy"]);
  for (const list of sourceFields) for (const field of list) fields.add(field);
  for (const [field, rule] of Object.entries(DERIVED)) if (fields.has(rule.from)) fields.add(field as RecordField);
  return inFieldOrder(fields);
}

/** A record's fields but `privacy` (see RecordCombiner.records). */
export type RecordFields = Omit<NetworkRecord, "privacy">;

/** The signals of a data set being built: which signals its sources have, and its hosting list. */
export interface SignalSetup {
  /** The signals some source of the data set has (a feed, or the hosting list). */
  readonly present: Iterable<Signal>;
  /** The hosting list (hosting-asns.ts): AS numbers and their providers' names. */
  readonly hostingAsns?: ReadonlyMap<number, string>;
}

/**
 * Builds records from what each source says, by precedence: a field comes from the
 * first source (in the given order) that has a value for it at that address; `privacy`
 * from every signal source there (see privacyAt).
 *
 * Equal records are one record, one id, however they came about (other sources, other
 * rows, the other family): the merge joins neighbours with equal ids, and a segment is
 * then the largest run on which every field is the same, which `network` relies on.
 */
export class RecordCombiner {
  /**
   * Record i+1's fields but `privacy`, which privacyOf(i) gives: the records are held
   * apart from their privacy because a record object with one more member costs about
   * 100 bytes more (the engine grows its out-of-line storage), 110 MB more at the peak
   * of a city import's 1.2 million records; a privacy is one of a few shared objects.
   */
  readonly records: RecordFields[] = [];
  /** Per record (0-based), its privacy's index in `privacyValues`. */
  private readonly privacyIds: number[] = [];
  private readonly privacyValues: Privacy[] = [];
  private readonly privacyIdOf = new Map<Privacy, number>();
  private readonly sourced: RecordField[];
  /** Every field but `privacy`: what a record object holds. */
  private readonly sourcedAndDerived: RecordField[];
  /** Record ids by the value indexes that gave them, per set of active sources (a piece's record is combined once). */
  private readonly idsByActive = new Map<string, Map<number | string, number>>();
  /** The records by their content (see recordId). */
  private byContent = new RecordIds();
  /** The sources with a privacy value (signal feeds), in precedence order. */
  private readonly signalSources: number[];
  private readonly uncovered: Privacy;
  private readonly hostingAsns: ReadonlyMap<number, string>;
  private readonly privacies = new PrivacyTable();

  constructor(
    private readonly fields: readonly RecordField[],
    private readonly sourceValues: ReadonlyArray<readonly FieldValues[]>,
    signals: SignalSetup = { present: [] },
  ) {
    this.sourced = fields.filter((field) => !isDerivedField(field));
    this.sourcedAndDerived = fields.filter((field) => field !== "privacy");
    this.signalSources = sourceValues.flatMap((values, i) => (values.some((value) => value.privacy != null) ? [i] : []));
    this.uncovered = this.privacies.intern(uncoveredPrivacy(signals.present));
    this.hostingAsns = signals.hostingAsns ?? new Map();
  }

  /**
   * A `recordOf` for merging the layers of the sources `active` (indexes into the
   * sources, in precedence order): the record id for their value indexes at a piece of
   * the space, 0 when none has anything there.
   */
  recorder(active: readonly number[]): (values: LayerValues) => number {
    const signature = active.join(",");
    const ids = this.idsByActive.get(signature) ?? new Map<number | string, number>();
    this.idsByActive.set(signature, ids);
    const all = new Int32Array(this.sourceValues.length);
    // The signal feeds among the active sources enter the key by the privacy they give
    // together, not by their value indexes: pieces that two Tor lists cover, or one of
    // them, answer alike and must be one record, or `network` would stop at a list's edge.
    const isSignal = active.map((source) => this.signalSources.includes(source));
    const feedPositions = active.flatMap((_, i) => (isSignal[i] ? [i] : []));
    const feedKeys = new Map<string, number>();
    const feedScratch = new Int32Array(this.sourceValues.length);
    // Each other source's place value when the value indexes are read as one mixed-radix
    // number (index + 1, 0 for nothing); text keys if that number could pass 2^53.
    const strides: number[] = [];
    let stride = 1;
    for (const [i, source] of active.entries()) {
      strides.push(isSignal[i] ? 0 : stride);
      if (!isSignal[i]) stride *= (this.sourceValues[source] as readonly FieldValues[]).length + 1;
    }
    const numeric = stride <= Number.MAX_SAFE_INTEGER;
    const feedPrivacyId = (values: LayerValues): number => {
      let text = "";
      for (const i of feedPositions) text += `${values[i]},`;
      let id = feedKeys.get(text);
      if (id === undefined) {
        feedScratch.fill(-1);
        for (const i of feedPositions) feedScratch[active[i] as number] = values[i] as number;
        const feeds = this.feedPrivacy(feedScratch);
        id = feeds === null ? -1 : this.privacyIndex(feeds);
        feedKeys.set(text, id);
      }
      return id;
    };
    return (values) => {
      let key: number | string = numeric ? 0 : "";
      let any = false;
      for (let i = 0; i < values.length; i++) {
        const value = values[i] as number;
        if (value >= 0) any = true;
        if (isSignal[i]) continue;
        if (numeric) (key as number) += (value + 1) * (strides[i] as number);
        else key += `${value},`;
      }
      if (!any) return 0;
      if (feedPositions.length > 0) key = `${key}|${feedPrivacyId(values)}`;
      let id = ids.get(key);
      if (id === undefined) {
        all.fill(-1);
        active.forEach((source, i) => (all[source] = values[i] as number));
        const record = this.combine(all);
        id = this.recordId(record, this.fields.includes("privacy") ? this.privacyIndex(this.privacyAt(all, record.asn)) : 0);
        ids.set(key, id);
      }
      return id;
    };
  }

  /** The id of the record with these fields and privacy: an equal record's, else a new one's. */
  private recordId(record: RecordFields, privacyId: number): number {
    const fields = this.sourcedAndDerived;
    let hash = hashValue(HASH_SEED, privacyId);
    for (const field of fields) hash = hashValue(hash, record[field as keyof RecordFields]);
    hash = finishHash(hash);
    const equal = this.byContent.find(hash, (position) => {
      if (this.privacyIds[position] !== privacyId) return false;
      const other = this.records[position] as RecordFields;
      for (const field of fields) if (other[field as keyof RecordFields] !== record[field as keyof RecordFields]) return false;
      return true;
    });
    if (equal >= 0) return equal + 1;
    this.records.push(record);
    this.privacyIds.push(privacyId);
    return this.byContent.add(hash) + 1;
  }

  /**
   * Lets go of what finding a piece's record takes (the ids by value indexes and by
   * content, over a hundred MB with city data), once every family is merged: the records
   * stay, and are written while that memory is free again.
   */
  endMerging(): void {
    this.idsByActive.clear();
    this.byContent = new RecordIds();
  }

  /** Record `index` (0-based)'s privacy. */
  privacyOf(index: number): Privacy {
    return this.privacyValues[this.privacyIds[index] as number] ?? this.uncovered;
  }

  /** Record `index` (0-based) with its privacy: the record as a lookup answers it. */
  recordOf(index: number): NetworkRecord {
    return { ...(this.records[index] as RecordFields), privacy: this.privacyOf(index) } as NetworkRecord;
  }

  private privacyIndex(privacy: Privacy): number {
    let index = this.privacyIdOf.get(privacy);
    if (index === undefined) {
      index = this.privacyValues.push(privacy) - 1;
      this.privacyIdOf.set(privacy, index);
    }
    return index;
  }

  private combine(values: LayerValues): RecordFields {
    const record: Record<string, FieldValue> = {};
    for (const field of this.sourcedAndDerived) record[field] = null;
    for (const field of this.sourced) {
      for (let source = 0; source < values.length; source++) {
        const index = values[source] as number;
        if (index < 0) continue;
        const value = (this.sourceValues[source] as readonly FieldValues[])[index]?.[field];
        if (value !== undefined && value !== null) {
          record[field] = value;
          break;
        }
      }
    }
    for (const field of this.fields) {
      const rule = DERIVED[field];
      const code = rule ? record[rule.from] : null;
      if (rule && typeof code === "string") record[field] = rule.name(code);
    }
    return record as RecordFields;
  }

  /**
   * The privacy of a piece of the space: each signal true where a source of it covers
   * the piece (the feeds' ranges; the hosting list by the piece's AS number), else the
   * data set's answer for uncovered addresses (false or null). The service is the first
   * one named, in precedence order, by a source that set hosting or relay there; the
   * hosting list comes after every feed. Equal privacies are one object.
   */
  private privacyAt(values: LayerValues, asn: FieldValue | undefined): Privacy {
    const feeds = this.feedPrivacy(values);
    const provider = typeof asn === "number" ? this.hostingAsns.get(asn) : undefined;
    if (provider === undefined) return feeds ?? this.uncovered;
    const base = feeds ?? this.uncovered;
    return this.privacies.intern(privacyOf({ ...base, hosting: true }, base.service ?? provider));
  }

  /** What the feeds covering a piece say (the signals they set, the first service), or null when none covers it. */
  private feedPrivacy(values: LayerValues): Privacy | null {
    let covered: Partial<Record<Signal, boolean | null>> | undefined;
    let service: string | null = null;
    for (const source of this.signalSources) {
      const index = values[source] as number;
      if (index < 0) continue;
      const said = (this.sourceValues[source] as readonly FieldValues[])[index]?.privacy as Privacy | null | undefined;
      if (!said) continue;
      covered ??= { ...this.uncovered };
      for (const signal of SIGNALS) if (said[signal] === true) covered[signal] = true;
      if (service === null && said.service !== null && (said.hosting === true || said.relay === true)) service = said.service;
    }
    return covered === undefined ? null : this.privacies.intern(privacyOf(covered, service));
  }
}
