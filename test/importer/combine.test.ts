import { expect, test } from "bun:test";
import { dataSetFields, RecordCombiner } from "../../src/importer/combine.ts";
import type { FieldValues } from "../../src/index/record-fields.ts";
import { NO_SIGNAL_SOURCE } from "../support/privacy.ts";
import { privacyOf } from "../../src/index/privacy.ts";

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

test("sources active in only one family share records with the other family when their sets match", () => {
  const values: FieldValues[] = [{ country_code: "FR" }];
  const combiner = new RecordCombiner(dataSetFields([["country_code"]]), [values, values]);
  const v4 = combiner.recorder([0]);
  const v6 = combiner.recorder([1]);
  const both = combiner.recorder([0]);
  expect(v4(Int32Array.of(0))).toBe(1);
  expect(both(Int32Array.of(0))).toBe(1);
  expect(v6(Int32Array.of(0))).toBe(2);
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
