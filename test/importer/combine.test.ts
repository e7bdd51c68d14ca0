import { expect, test } from "bun:test";
import { dataSetFields, RecordCombiner } from "../../src/importer/combine.ts";
import type { FieldValues } from "../../src/index/record-fields.ts";
import { NO_SIGNAL_SOURCE } from "../support/privacy.ts";
import { privacyOf } from "../../src/index/privacy.ts";
import { mergeLayers } from "../../src/importer/merge.ts";
import fc from "fast-check";

test("the data set's fields: the base four, what the sources have, and names for codes, in result order", () => {
  expect(dataSetFields([["asn", "as_name"]])).toEqual(["asn", "as_name", "country_code", "country", "privacy"]);
  expect(dataSetFields([["time_zone", "city"], ["continent_code"]])).toEqual(["asn", "as_name", "country_code", "country", "city", "time_zone", "continent_code", "continent", "privacy"]);
});

test("each field comes from the first source with a value there; names follow the chosen codes", () => {
  const city: FieldValues[] = [
    { country_code: "DE", city: "Berlin", latitude: 52.52 },
    { country_code: null, city: null, latitude: null },
  ];
  const asn: FieldValues[] = [{ asn: 64500, as_name: "Example" }];
  const country: FieldValues[] = [{ country_code: "AT" }, { country_code: "QQ" }];
  const fields = dataSetFields([["country_code", "city", "latitude"], ["asn", "as_name"], ["country_code"]]);
  const combiner = new RecordCombiner(fields, [city, asn, country]);
  const record = combiner.recorder([0, 1, 2]);
  const id = record(Int32Array.of(0, 0, 0));
  expect(combiner.recordOf(id - 1)).toEqual({ asn: 64500, as_name: "Example", country_code: "DE", country: "Germany", city: "Berlin", latitude: 52.52, privacy: NO_SIGNAL_SOURCE });
  // The city source has the columns but no values here: the country source's code is used.
  const fallback = record(Int32Array.of(1, -1, 0));
  expect(combiner.recordOf(fallback - 1)).toEqual({ asn: null, as_name: null, country_code: "AT", country: "Austria", city: null, latitude: null, privacy: NO_SIGNAL_SOURCE });
  // A code CLDR does not know keeps its code and has no name.
  expect(combiner.records[record(Int32Array.of(-1, -1, 1)) - 1]).toMatchObject({ country_code: "QQ", country: null });
  // Nothing anywhere: not found. The same values: the same record.
  expect(record(Int32Array.of(-1, -1, -1))).toBe(0);
  expect(record(Int32Array.of(0, 0, 0))).toBe(id);
  expect(combiner.records).toHaveLength(3);
});

test("the families share records, whichever sources are active in each", () => {
  const values: FieldValues[] = [{ country_code: "FR" }];
  const combiner = new RecordCombiner(dataSetFields([["country_code"]]), [values, values]);
  const v4 = combiner.recorder([0]);
  const v6 = combiner.recorder([1]);
  const both = combiner.recorder([0]);
  expect(v4(Int32Array.of(0))).toBe(1);
  expect(both(Int32Array.of(0))).toBe(1);
  expect(v6(Int32Array.of(0))).toBe(1);
});

test("equal records are one record, whichever sources and rows give them", () => {
  const a: FieldValues[] = [{ country_code: "US" }, { country_code: "DE" }];
  const b: FieldValues[] = [{ country_code: "DE" }, { country_code: "US" }];
  const asn: FieldValues[] = [{ asn: 64500, as_name: "Example" }, { asn: null, as_name: null }];
  const combiner = new RecordCombiner(dataSetFields([["country_code"], ["country_code"], ["asn", "as_name"]]), [a, b, asn]);
  const record = combiner.recorder([0, 1, 2]);
  // US from the first source alone, from both, from the second alone: one record.
  const us = record(Int32Array.of(0, -1, -1));
  expect(record(Int32Array.of(0, 1, -1))).toBe(us);
  expect(record(Int32Array.of(-1, 1, -1))).toBe(us);
  expect(record(Int32Array.of(0, 0, -1))).toBe(us); // the second source's DE comes after
  // A source whose values are null here adds nothing to the record.
  expect(record(Int32Array.of(0, -1, 1))).toBe(us);
  expect(record(Int32Array.of(-1, 0, -1))).not.toBe(us);
  expect(record(Int32Array.of(0, -1, 0))).not.toBe(us);
  expect(combiner.records).toHaveLength(3);
  // Values that print alike but differ stay apart: the number 1 and the text "1".
  const loose = new RecordCombiner(dataSetFields([["asn", "as_name"]]), [[{ asn: 1, as_name: "1" }, { asn: 1, as_name: 1 as unknown as string }]]);
  const looseRecord = loose.recorder([0]);
  expect(looseRecord(Int32Array.of(0))).not.toBe(looseRecord(Int32Array.of(1)));
});

test("records that differ only in privacy stay apart", () => {
  const tor = privacyOf({ tor: true }, null);
  const country: FieldValues[] = [{ country_code: "US" }];
  const combiner = new RecordCombiner(dataSetFields([["privacy"], ["country_code"]]), [[{ privacy: tor }], country], { present: ["tor"] });
  const record = combiner.recorder([0, 1]);
  const listed = record(Int32Array.of(0, 0));
  const unlisted = record(Int32Array.of(-1, 0));
  expect(listed).not.toBe(unlisted);
  expect(combiner.privacyOf(listed - 1).tor).toBe(true);
  expect(combiner.privacyOf(unlisted - 1).tor).toBe(false);
});

test("merged sources: no two neighbouring segments answer alike, and each answers as the sources say (random sources)", () => {
  const palette: FieldValues[] = [{ country_code: "US" }, { country_code: "DE" }, { country_code: null }];
  const asnPalette: FieldValues[] = [{ asn: 1, as_name: "One" }, { asn: 2, as_name: "Two" }];
  const layer = (values: number) =>
    fc.array(fc.tuple(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 0, max: values - 1 })), { maxLength: 12 }).map((cuts) => {
      // Disjoint ranges in order: each cut a range of 1–8 addresses after a gap of 0–3.
      const ranges: { start: bigint; end: bigint; value: number }[] = [];
      let at = 0;
      for (const [length, value] of cuts) {
        const start = at + (length % 4);
        const end = start + (length % 8);
        ranges.push({ start: BigInt(start), end: BigInt(end), value });
        at = end + 1;
      }
      return ranges;
    });
  fc.assert(
    fc.property(layer(palette.length), layer(palette.length), layer(asnPalette.length), (first, second, asn) => {
      const sources = [palette, palette, asnPalette];
      const combiner = new RecordCombiner(dataSetFields([["country_code"], ["country_code"], ["asn", "as_name"]]), sources);
      const table = mergeLayers(4, [first, second, asn], combiner.recorder([0, 1, 2]));
      const answer = (id: number) => (id === 0 ? null : combiner.recordOf(id - 1));
      for (let i = 1; i < table.records.length; i++) expect(answer(table.records[i]!)).not.toEqual(answer(table.records[i - 1]!));
      const valueAt = (ranges: typeof first, x: bigint) => ranges.find((range) => range.start <= x && x <= range.end)?.value ?? -1;
      // Each address's answer, combined on its own by another combiner.
      const reference = new RecordCombiner(dataSetFields([["country_code"], ["country_code"], ["asn", "as_name"]]), sources);
      const referenceRecord = reference.recorder([0, 1, 2]);
      for (let x = 0n; x < 150n; x++) {
        const segment = table.starts.findLastIndex((start) => start <= x);
        const id = referenceRecord(Int32Array.from([first, second, asn].map((ranges) => valueAt(ranges, x))));
        expect(answer(table.records[segment]!)).toEqual(id === 0 ? null : reference.recordOf(id - 1));
      }
    }),
    { numRuns: 200 },
  );
});

test("privacy: every signal source covering a piece sets its signal, the hosting list by the piece's AS; the first hosting or relay source names the service", () => {
  const hosting = privacyOf({ hosting: true }, "Cloud A");
  const relay = privacyOf({ relay: true }, "Relay B");
  const tor = privacyOf({ tor: true }, null);
  const asn: FieldValues[] = [{ asn: 64500, as_name: "Listed" }, { asn: 64501, as_name: "Not listed" }];
  const sources = [[{ privacy: hosting }], [{ privacy: relay }], [{ privacy: tor }], asn];
  const fields = dataSetFields([["privacy"], ["privacy"], ["privacy"], ["asn", "as_name"]]);
  const combiner = new RecordCombiner(fields, sources, { present: ["hosting", "relay", "tor"], hostingAsns: new Map([[64500, "Listed Hosting"]]) });
  const record = combiner.recorder([0, 1, 2, 3]);
  const at = (...values: number[]) => combiner.privacyOf(record(Int32Array.from(values)) - 1);
  expect(at(0, 0, -1, 1)).toEqual({ hosting: true, tor: false, vpn: null, relay: true, proxy: null, service: "Cloud A" });
  expect(at(-1, 0, 0, 1)).toEqual({ hosting: false, tor: true, vpn: null, relay: true, proxy: null, service: "Relay B" });
  // The hosting list comes after every feed: its provider names the service only where no feed did.
  expect(at(-1, -1, -1, 0)).toEqual({ hosting: true, tor: false, vpn: null, relay: false, proxy: null, service: "Listed Hosting" });
  expect(at(-1, 0, -1, 0)).toEqual({ hosting: true, tor: false, vpn: null, relay: true, proxy: null, service: "Relay B" });
  expect(at(-1, -1, -1, 1)).toEqual({ hosting: false, tor: false, vpn: null, relay: false, proxy: null, service: null });
  // Equal privacies are one object, whatever the pieces they come from.
  expect(at(-1, -1, -1, 1)).toBe(at(-1, -1, -1, 1));
  expect(combiner.records.every((fields) => !("privacy" in fields))).toBe(true);
});
