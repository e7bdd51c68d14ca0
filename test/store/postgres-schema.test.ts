import { expect, test } from "bun:test";
import { MIGRATIONS } from "../../src/store/postgres-schema.ts";

/**
 * docs/postgresql.md says PostgreSQL 11 or later, and the tests run on a newer one: a
 * migration must not call a function added since 11, which the tests would not notice.
 */
const ADDED_AFTER_11 = ["gen_random_uuid", "trim_array", "string_to_table", "date_bin", "unistr", "any_value", "random_normal", "uuidv4", "uuidv7", "bit_count", "ltrim_array"];

test("the migrations call no function PostgreSQL 11 lacks", () => {
  const called = new Set(MIGRATIONS.flatMap((migration) => [...migration.matchAll(/\b([a-z_][a-z0-9_]*)\s*\(/gi)].map((match) => match[1]!.toLowerCase())));
  expect(ADDED_AFTER_11.filter((name) => called.has(name))).toEqual([]);
});
