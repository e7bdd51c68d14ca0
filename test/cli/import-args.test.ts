import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseImportArgs } from "../../src/cli/import-args.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-import-args-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const [a, b, c] = ["a.mmdb", "b.csv", "c.tsv"].map((name) => {
  const path = join(dir, name);
  writeFileSync(path, "");
  return path;
}) as [string, string, string];

describe("data import arguments", () => {
  test("files in order, source options before their file, + joins files into one source", () => {
    const parsed = parseImportArgs(["--data", "out.db", "--name", "City", "--license=CC BY 4.0", a, "+", b, "--format", "iptoasn-tsv", "--family", "6", c, "--json"]);
    expect(parsed).toEqual({
      data: "out.db",
      json: true,
      withDefault: false,
      downloads: { requireChecksum: false },
      sources: [
        { files: [{ path: a, format: undefined, family: undefined }, { path: b, format: undefined, family: undefined }], describe: { name: "City", license: "CC BY 4.0" } },
        { files: [{ path: c, format: "iptoasn-tsv", family: 6 }], describe: {} },
      ],
    });
  });

  test("a FILE named like a member of Object.prototype is a FILE, not an option", () => {
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      for (const name of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
        writeFileSync(join(dir, name), "");
        expect(parseImportArgs([name]).sources).toEqual([{ files: [{ path: name, format: undefined, family: undefined, sha256: undefined }], describe: {} }]);
      }
    } finally {
      process.chdir(cwd);
    }
  });

  test("--download-timeout, --max-expanded and --require-checksum are the import's, anywhere", () => {
    expect(parseImportArgs([a, "--max-expanded", "1MiB", "--download-timeout=5s", "--require-checksum"]).downloads).toEqual({ "max-expanded": "1MiB", "download-timeout": "5s", requireChecksum: true });
  });

  test("--signal and --service describe the source of the FILE after them, and join a joined source from its first FILE", () => {
    const parsed = parseImportArgs(["--signal", "tor", a, "--signal=relay", "--service", "iCloud Private Relay", b, "+", c, "--signal", "hosting", a]);
    expect(parsed.sources).toEqual([
      { files: [{ path: a, format: undefined, family: undefined, sha256: undefined }], describe: {}, feed: { signal: "tor", service: undefined } },
      {
        files: [
          { path: b, format: undefined, family: undefined, sha256: undefined },
          { path: c, format: undefined, family: undefined, sha256: undefined },
        ],
        describe: {},
        feed: { signal: "relay", service: "iCloud Private Relay" },
      },
      { files: [{ path: a, format: undefined, family: undefined, sha256: undefined }], describe: {}, feed: { signal: "hosting", service: undefined } },
    ]);
    expect(parseImportArgs([a]).sources[0]).not.toHaveProperty("feed");
  });

  test.each([
    [["--signal", "anonymous", a], /--signal must be one of hosting, tor, vpn, relay, proxy \(got "anonymous"\)/],
    [["--signal", "tor", "--service", "Onion", a], /--service names the provider of hosting or relay addresses; a tor source has none/],
    [["--service", "", a], /--service must be 1 to 200 characters, not all spaces, without control characters \(got ""\)/],
    [["--service", "   ", a], /--service must be 1 to 200 characters/],
    [["--service", "x".repeat(201), a], /--service must be 1 to 200 characters, not all spaces, without control characters \(got "x{80}"…\)/],
    [["--service", "x".repeat(10_000), a], /--service must be 1 to 200 characters/],
    [["--service", "Relay\u0000", a], /--service must be 1 to 200 characters, not all spaces, without control characters \(got "Relay\\u0000"\)/],
    [["--service", "\u001b[31mRelay", a], /--service must be 1 to 200 characters/],
    [["--service", "Relay\u0007", a], /--service must be 1 to 200 characters/],
    [["--service", "Relay\nNext", a], /--service must be 1 to 200 characters/],
    [["--service", "Relay\u009b", a], /--service must be 1 to 200 characters, not all spaces, without control characters \(got "Relay\\u009b"\)/],
    [[a, "--signal", "tor"], /--signal must come before the FILE it describes/],
    [[a, "+", "--signal", "tor", b], /describe a joined source before its first FILE/],
  ])("feed options refused: %p", (argv, message) => {
    expect(() => parseImportArgs(argv as string[])).toThrow(message);
  });

  test("--service of 200 characters is taken, as a correction's service is", () => {
    expect(parseImportArgs(["--signal", "relay", "--service", "x".repeat(200), a]).sources[0]?.feed).toEqual({ signal: "relay", service: "x".repeat(200) });
    // Characters, not UTF-16 code units: 200 emoji are 200 characters.
    expect(parseImportArgs(["--signal", "relay", "--service", "😀".repeat(200), a]).sources[0]?.feed).toEqual({ signal: "relay", service: "😀".repeat(200) });
    expect(() => parseImportArgs(["--signal", "relay", "--service", "😀".repeat(201), a])).toThrow(/--service must be 1 to 200 characters/);
  });

  test.each([
    [[], /at least one FILE/],
    [[a, "--license", "CC0"], /--license must come before the FILE it describes/],
    [["--format", "xml", a], /--format must be one of mmdb, asn-csv/],
    [["--family", "5", a], /--family must be 4 or 6/],
    [["--name", "", a], /--name must not be empty/],
    [["--name"], /--name needs a value/],
    [["--name", "--license", "x", a], /--name needs a value/],
    [["+", a], /"\+" joins two FILEs/],
    [[a, "+"], /"\+" must be followed by a FILE/],
    [[a, "+", "+", b], /"\+" joins two FILEs/],
    [[a, "+", "--name", "x", b], /describe a joined source before its first FILE/],
    [["--bogus", a], /unknown option "--bogus"/],
    [[join(dir, "missing.csv")], /missing\.csv: no such file/],
  ] as Array<[string[], RegExp]>)("%p is refused", (args, message) => {
    expect(() => parseImportArgs(args)).toThrow(message);
  });
});
