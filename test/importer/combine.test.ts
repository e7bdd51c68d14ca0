import { expect, test } from "bun:test";
import { dataSetFields, RecordCombiner } from "../../src/importer/combine.ts";
import type { FieldValues } from "../../src/index/record-fields.ts";

test("the data set's fields: the base four, what the sources have, and names for codes, in result order", () => {
  expect(dataSetFields([["asn", "as_name"]])).toEqual(["asn", "as_name", "country_code", "country"]);
  expect(dataSetFields([["time_zone", "city"], ["continent_code"]])).toEqual(["asn", "as_name", "country_code", "country", "city", "time_zone", "continent_code", "continent"]);
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
  expect(combiner.records[id - 1]).toEqual({ asn: 64500, as_name: "Example", country_code: "DE", country: "Germany", city: "Berlin", latitude: 52.52 });
  // The city source has the columns but no values here: the country source's code is used.
  const fallback = record(Int32Array.of(1, -1, 0));
  expect(combiner.records[fallback - 1]).toEqual({ asn: null, as_name: null, country_code: "AT", country: "Austria", city: null, latitude: null });
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
