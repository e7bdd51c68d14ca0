import { expect, test } from "bun:test";
import { readServeConfig } from "../../src/config/serve-config.ts";

test("--download-timeout and --max-expanded: 30 minutes and 2 GiB by default, a flag over its variable", () => {
  expect(readServeConfig({}, {})).toMatchObject({ downloadTimeout: 30 * 60_000, maxExpanded: 2 * 2 ** 30 });
  expect(readServeConfig({}, { IPLOOKUP_DOWNLOAD_TIMEOUT: "2h", IPLOOKUP_MAX_EXPANDED: "3GiB" })).toMatchObject({ downloadTimeout: 2 * 3_600_000, maxExpanded: 3 * 2 ** 30 });
  expect(readServeConfig({ "download-timeout": "90s", "max-expanded": "512MiB" }, { IPLOOKUP_DOWNLOAD_TIMEOUT: "2h" })).toMatchObject({ downloadTimeout: 90_000, maxExpanded: 512 * 2 ** 20 });
});

test("bad values are configuration errors naming the flag or variable", () => {
  expect(() => readServeConfig({ "download-timeout": "0s" }, {})).toThrow('--download-timeout: "0s" is shorter than the shortest timeout, 1s');
  expect(() => readServeConfig({}, { IPLOOKUP_DOWNLOAD_TIMEOUT: "soon" })).toThrow('IPLOOKUP_DOWNLOAD_TIMEOUT: "soon" is not a duration');
  expect(() => readServeConfig({ "max-expanded": "2TB" }, {})).toThrow('--max-expanded: "2TB" is not a size');
  expect(() => readServeConfig({ "max-expanded": "0" }, {})).toThrow("--max-expanded: must be at least 1 byte");
});
