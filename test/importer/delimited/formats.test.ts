import { expect, test } from "bun:test";
import { RECORD_FIELDS } from "../../../src/index/record-fields.ts";
import { DELIMITED_FORMATS, DELIMITED_LAYOUTS, delimitedFormatHelp, isDelimitedFormat } from "../../../src/importer/delimited/formats.ts";

test("each layout: its columns and the fields they fill", () => {
  const table = Object.fromEntries(
    DELIMITED_FORMATS.map((format) => {
      const layout = DELIMITED_LAYOUTS[format];
      return [format, { separator: layout.separator, columns: layout.columns.map((column) => column.name).join(" "), fields: layout.fields }];
    }),
  );
  expect(table).toEqual({
    "asn-csv": { separator: ",", columns: "start end autonomous_system_number autonomous_system_organization", fields: ["asn", "as_name"] },
    "country-csv": { separator: ",", columns: "start end country_code", fields: ["country_code"] },
    "city-csv": {
      separator: ",",
      columns: "start end country_code state1 state2 city postcode latitude longitude timezone",
      fields: ["country_code", "city", "region", "postal_code", "latitude", "longitude", "time_zone"],
    },
    "iptoasn-tsv": { separator: "\t", columns: "range_start range_end AS_number country_code AS_description", fields: ["asn", "as_name", "country_code"] },
  });
});

test("the table is well formed", () => {
  for (const format of DELIMITED_FORMATS) {
    const layout = DELIMITED_LAYOUTS[format];
    expect(layout.format).toBe(format);
    expect(layout.columns.slice(0, 2).map((column) => column.kind)).toEqual(["start", "end"]);
    for (const column of layout.columns.slice(2)) {
      expect(column.kind === "ignored").toBe(column.field === undefined);
      if (column.field !== undefined) expect(RECORD_FIELDS).toContain(column.field);
    }
    const fields = layout.columns.flatMap((column) => (column.field ? [column.field] : []));
    expect(new Set(fields).size).toBe(fields.length);
    expect(layout.fields.toSorted()).toEqual(fields.toSorted());
  }
});

test("names", () => {
  expect(DELIMITED_FORMATS).toEqual(["asn-csv", "country-csv", "city-csv", "iptoasn-tsv"]);
  expect(isDelimitedFormat("city-csv")).toBe(true);
  expect(isDelimitedFormat("mmdb")).toBe(false);
  expect(isDelimitedFormat("toString")).toBe(false);
});

test("help lines name every format, its columns and fields", () => {
  const help = delimitedFormatHelp().join("\n");
  expect(help).toContain("asn-csv      ip-location-db ASN");
  expect(help).toContain("columns: range_start<TAB>range_end<TAB>AS_number<TAB>country_code<TAB>AS_description");
  expect(help).toContain("columns: start,end,country_code,state1,state2,city,postcode,latitude,longitude,timezone");
  expect(help).toContain("fields:  country_code, city, region, postal_code, latitude, longitude, time_zone");
  expect(delimitedFormatHelp()).toHaveLength(DELIMITED_FORMATS.length * 3);
});
