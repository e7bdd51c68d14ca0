import { expect, test } from "bun:test";
import { dataSourceName } from "../../src/config/paths.ts";

test("the logs name embedded data by its sources, as the start-up line does, and a data file by its path", () => {
  const sources = "@ip-location-db/asn@2.3.2026061719";
  expect(dataSourceName("/$bunfs/root/iplookup-data-qj5cycea.db", sources)).toBe(`embedded (${sources})`);
  expect(dataSourceName("B:/~BUN/root/iplookup-data.db", sources)).toBe(`embedded (${sources})`);
  expect(dataSourceName("/var/lib/iplookup/data.db", sources)).toBe("/var/lib/iplookup/data.db");
});
