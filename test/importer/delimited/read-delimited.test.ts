import { describe, expect, test } from "bun:test";
import { parseAddress } from "../../../src/address/parse.ts";
import type { FieldValues } from "../../../src/index/record-fields.ts";
import type { DelimitedFormat } from "../../../src/importer/delimited/formats.ts";
import { familyFromFileName, readDelimited } from "../../../src/importer/delimited/read-delimited.ts";
import { flattenRows } from "../../../src/importer/flatten.ts";
import type { Family, ValueRange } from "../../../src/importer/ranges.ts";
import type { SourceData, SourceLayer } from "../../../src/importer/source-data.ts";

// Every fixture here is written by the test itself, in the layouts ip-location-db
// (github.com/sapics/ip-location-db) and iptoasn.com publish; the rows are made up, in
// the style of the real files (quoted organisation names, "Not routed", "None").

/** An address text as the number the ranges use (IPv4-mapped text stays IPv6). */
function n(text: string): bigint {
  const address = parseAddress(text);
  if (address === null) throw new Error(`bad test address ${text}`);
  if (address.version === 4) return text.includes(":") ? (0xffffn << 32n) | BigInt(address.value) : BigInt(address.value);
  const [a, b, c, d] = address.words;
  return (BigInt(a) << 96n) | (BigInt(b) << 64n) | (BigInt(c) << 32n) | BigInt(d);
}

/** Reads a text, and its UTF-8 bytes (as a file is read), which must give the same. */
function read(text: string, format: DelimitedFormat, file = "test.csv", family?: Family): SourceData {
  const options = family === undefined ? { format, file } : { format, file, family };
  let fromText: SourceData | undefined;
  let textError: unknown;
  try {
    fromText = readDelimited(text, options);
  } catch (error) {
    textError = error;
  }
  if (textError !== undefined) {
    expect(() => readDelimited(new TextEncoder().encode(text), options)).toThrow((textError as Error).message);
    throw textError;
  }
  expect(readDelimited(new TextEncoder().encode(text), options)).toEqual(fromText!);
  return fromText!;
}

/** A layer as [start, end, values] with decimal bounds, for toEqual. */
function plain(data: SourceData, family: Family): Array<[string, string, FieldValues]> {
  const layer = family === 4 ? data.v4 : data.v6;
  return layer.ranges.map((range) => [String(range.start), String(range.end), data.values[range.value] as FieldValues]);
}

/** What the layer says at one address, or undefined. */
function at(data: SourceData, family: Family, address: bigint): FieldValues | undefined {
  const layer: SourceLayer = family === 4 ? data.v4 : data.v6;
  const range = layer.ranges.find((r) => r.start <= address && address <= r.end);
  return range === undefined ? undefined : data.values[range.value];
}

function expectWellFormed(data: SourceData): void {
  for (const layer of [data.v4, data.v6]) {
    for (let i = 0; i < layer.ranges.length; i++) {
      const range = layer.ranges[i] as ValueRange<number>;
      expect(range.start <= range.end).toBe(true);
      if (i > 0) expect((layer.ranges[i - 1] as ValueRange<number>).end < range.start).toBe(true);
      expect(data.values[range.value]).toBeDefined();
    }
  }
}

const s = String;

describe("asn-csv", () => {
  const text = [
    '1.0.0.0,1.0.0.255,13335,"Cloudflare, Inc."',
    "1.0.4.0,1.0.7.255,38803,Gtelecom Pty Ltd",
    '1.0.64.0,1.0.127.255,18144,"Enecom,Inc."',
    '2.0.0.0,2.0.0.0,7,"The ""Best"" ISP"',
    "2.0.0.1,2.0.0.1,64512,",
    "2.0.0.2,2.0.0.2,,Nobody",
    "255.255.255.255,255.255.255.255,4294967295,Last",
  ].join("\n");

  test("text addresses: fields, values, quoted names, empty fields null", () => {
    const data = read(text, "asn-csv", "asn-ipv4.csv");
    expect(data.fields).toEqual(["asn", "as_name"]);
    expect(data.v4.rows).toBe(7);
    expect(data.v6).toEqual({ rows: 0, ranges: [] });
    expect(plain(data, 4)).toEqual([
      [s(n("1.0.0.0")), s(n("1.0.0.255")), { asn: 13335, as_name: "Cloudflare, Inc." }],
      [s(n("1.0.4.0")), s(n("1.0.7.255")), { asn: 38803, as_name: "Gtelecom Pty Ltd" }],
      [s(n("1.0.64.0")), s(n("1.0.127.255")), { asn: 18144, as_name: "Enecom,Inc." }],
      [s(n("2.0.0.0")), s(n("2.0.0.0")), { asn: 7, as_name: 'The "Best" ISP' }],
      [s(n("2.0.0.1")), s(n("2.0.0.1")), { asn: 64512, as_name: null }],
      [s(n("2.0.0.2")), s(n("2.0.0.2")), { asn: null, as_name: "Nobody" }],
      ["4294967295", "4294967295", { asn: 4294967295, as_name: "Last" }],
    ]);
    expectWellFormed(data);
  });

  test("decimal addresses give the same data as text ones", () => {
    const numeric = text
      .split("\n")
      .map((line) => {
        const [start, end, ...rest] = line.split(",");
        return [s(n(start as string)), s(n(end as string)), ...rest].join(",");
      })
      .join("\n");
    const fromText = read(text, "asn-csv", "asn-ipv4.csv");
    for (const data of [read(numeric, "asn-csv", "asn-ipv4-num.csv"), read(numeric, "asn-csv", "whatever.csv", 4)]) {
      expect(plain(data, 4)).toEqual(plain(fromText, 4));
      expect(data.v4.rows).toBe(7);
    }
  });

  test("equal values share one index", () => {
    const data = read("1.0.0.0,1.0.0.255,13335,Cloudflare\n1.1.1.0,1.1.1.255,13335,Cloudflare\n1.2.0.0,1.2.0.0,13335,\"Cloudflare\"", "asn-csv");
    expect(data.values).toEqual([{ asn: 13335, as_name: "Cloudflare" }]);
    expect(data.v4.ranges.map((r) => r.value)).toEqual([0, 0, 0]);
  });

  test("IPv6 text and decimal, with a 2^128-1 end", () => {
    const text6 = ["2001::,2001::ffff:ffff:ffff:ffff:ffff:ffff,6939,Hurricane Electric LLC", "2c0f:e9a0:2:0:0:0:2a::,2c0f:e9a0:2::2a:ffff,1,A", "ffff::,ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff,2,Top"].join("\n");
    const num6 = [
      "42540488161975842760550356425300246528,42540488241204005274814694018844196863,6939,Hurricane Electric LLC",
      `${n("2c0f:e9a0:2::2a:0")},${n("2c0f:e9a0:2::2a:ffff")},1,A`,
      `${n("ffff::")},340282366920938463463374607431768211455,2,Top`,
    ].join("\n");
    const a = read(text6, "asn-csv", "asn-ipv6.csv");
    const b = read(num6, "asn-csv", "asn-ipv6-num.csv");
    expect(a.v4.rows).toBe(0);
    expect(a.v6.rows).toBe(3);
    expect(plain(b, 6)).toEqual(plain(a, 6));
    expect(a.v6.ranges[0]).toMatchObject({ start: n("2001::"), end: n("2001::ffff:ffff:ffff:ffff:ffff:ffff") });
    expect(a.v6.ranges[2]?.end).toBe((1n << 128n) - 1n);
  });
});

describe("country-csv", () => {
  test("codes upper-cased, empty null", () => {
    const data = read("1.0.0.0,1.0.0.255,au\n1.0.1.0,1.0.3.255,CN\n1.0.4.0,1.0.4.0,\n2001:200::,2001:218:2000:51:ffff:ffff:ffff:ffff,Jp", "country-csv");
    expect(data.fields).toEqual(["country_code"]);
    expect(plain(data, 4)).toEqual([
      [s(n("1.0.0.0")), s(n("1.0.0.255")), { country_code: "AU" }],
      [s(n("1.0.1.0")), s(n("1.0.3.255")), { country_code: "CN" }],
      [s(n("1.0.4.0")), s(n("1.0.4.0")), { country_code: null }],
    ]);
    expect(plain(data, 6)).toEqual([[s(n("2001:200::")), s(n("2001:218:2000:51:ffff:ffff:ffff:ffff")), { country_code: "JP" }]]);
    expect(data.v4.rows).toBe(3);
    expect(data.v6.rows).toBe(1);
  });
});

describe("city-csv", () => {
  test("all columns; state2 dropped; coordinates numbers; empty fields null", () => {
    const text = [
      "1.0.0.0,1.0.0.255,AU,Queensland,,South Brisbane,,-27.4767,153.017,",
      '1.0.1.0,1.0.1.255,CN,Fujian,"Xiamen, district",Xiamen,361000,24.4798,118.089,Asia/Shanghai',
      "1.0.2.0,1.0.2.255,,,,,,,,",
      "2001:200::,2001:200::ffff,JP,Tokyo,,Tokyo,100-0001,35.6895,139.6917,Asia/Tokyo",
      "3.0.0.0,3.0.0.0,US,X,,Y,,90,-180,",
      "3.0.0.1,3.0.0.1,US,X,,Y,,-0,1e1,",
    ].join("\r\n");
    const data = read(text, "city-csv", "dbip-city-ipv4.csv");
    expect(data.fields).toEqual(["country_code", "city", "region", "postal_code", "latitude", "longitude", "time_zone"]);
    expect(plain(data, 4).map((row) => row[2])).toEqual([
      { country_code: "AU", city: "South Brisbane", region: "Queensland", postal_code: null, latitude: -27.4767, longitude: 153.017, time_zone: null },
      { country_code: "CN", city: "Xiamen", region: "Fujian", postal_code: "361000", latitude: 24.4798, longitude: 118.089, time_zone: "Asia/Shanghai" },
      { country_code: null, city: null, region: null, postal_code: null, latitude: null, longitude: null, time_zone: null },
      { country_code: "US", city: "Y", region: "X", postal_code: null, latitude: 90, longitude: -180, time_zone: null },
      { country_code: "US", city: "Y", region: "X", postal_code: null, latitude: 0, longitude: 10, time_zone: null },
    ]);
    expect(Object.is((data.values[data.v4.ranges[4]!.value] as FieldValues).latitude, 0)).toBe(true);
    expect(plain(data, 6).map((row) => row[2])).toEqual([
      { country_code: "JP", city: "Tokyo", region: "Tokyo", postal_code: "100-0001", latitude: 35.6895, longitude: 139.6917, time_zone: "Asia/Tokyo" },
    ]);
  });
});

describe("iptoasn-tsv", () => {
  const combined = [
    "0.0.0.0\t0.255.255.255\t0\tNone\tNot routed",
    "1.0.0.0\t1.0.0.255\t13335\tUS\tCLOUDFLARENET",
    "1.0.1.0\t1.0.3.255\t0\tNone\tNot routed",
    "1.0.4.0\t1.0.7.255\t38803\tAU\tGTELECOM-AUSTRALIA Gtelecom Pty Ltd",
    "1.0.8.0\t1.0.8.255\t64512\tNone\tPrivate, \"quoted\" as is",
    "1.0.9.0\t1.0.9.255\t64513\t\t",
    "::\t1:ffff:ffff:ffff:ffff:ffff:ffff:ffff\t0\tNone\tNot routed",
    "2001::\t2001::ffff:ffff:ffff:ffff:ffff:ffff\t6939\tUS\tHURRICANE",
    "2001:4::\t2001:4:111:ffff:ffff:ffff:ffff:ffff\t0\tNone\tNot routed",
  ].join("\n");

  test("the combined file: both families; Not routed adds no range; None is null", () => {
    const data = read(combined, "iptoasn-tsv", "ip2asn-combined.tsv");
    expect(data.fields).toEqual(["asn", "as_name", "country_code"]);
    expect(plain(data, 4)).toEqual([
      [s(n("1.0.0.0")), s(n("1.0.0.255")), { asn: 13335, as_name: "CLOUDFLARENET", country_code: "US" }],
      [s(n("1.0.4.0")), s(n("1.0.7.255")), { asn: 38803, as_name: "GTELECOM-AUSTRALIA Gtelecom Pty Ltd", country_code: "AU" }],
      [s(n("1.0.8.0")), s(n("1.0.8.255")), { asn: 64512, as_name: 'Private, "quoted" as is', country_code: null }],
      [s(n("1.0.9.0")), s(n("1.0.9.255")), { asn: 64513, as_name: null, country_code: null }],
    ]);
    expect(plain(data, 6)).toEqual([[s(n("2001::")), s(n("2001::ffff:ffff:ffff:ffff:ffff:ffff")), { asn: 6939, as_name: "HURRICANE", country_code: "US" }]]);
    expect(data.values.some((values) => values.as_name === "Not routed")).toBe(false);
    // Rows that hold data; the Not routed ones are not counted.
    expect(data.v4.rows).toBe(4);
    expect(data.v6.rows).toBe(1);
  });

  test("a Not routed row inside a routed one hides nothing", () => {
    const data = read("1.0.0.0\t1.0.0.255\t13335\tUS\tCF\n1.0.0.16\t1.0.0.31\t0\tNone\tNot routed", "iptoasn-tsv");
    expect(plain(data, 4)).toEqual([[s(n("1.0.0.0")), s(n("1.0.0.255")), { asn: 13335, as_name: "CF", country_code: "US" }]]);
  });

  test("AS 0 with another description is kept", () => {
    const data = read("1.0.0.0\t1.0.0.255\t0\tNone\tReserved", "iptoasn-tsv");
    expect(plain(data, 4)).toEqual([[s(n("1.0.0.0")), s(n("1.0.0.255")), { asn: 0, as_name: "Reserved", country_code: null }]]);
  });

  test("the u32 variant reads like the text one", () => {
    const v4 = combined.split("\n").filter((line) => !line.includes(":"));
    const u32 = v4.map((line) => {
      const [start, end, ...rest] = line.split("\t");
      return [s(n(start as string)), s(n(end as string)), ...rest].join("\t");
    });
    const a = read(v4.join("\n"), "iptoasn-tsv", "ip2asn-v4.tsv");
    const b = read(u32.join("\n"), "iptoasn-tsv", "/data/ip2asn-v4-u32.tsv");
    expect(plain(b, 4)).toEqual(plain(a, 4));
    expect(b.v4.rows).toBe(4);
  });
});

describe("lines", () => {
  test("CRLF, blank lines, a BOM and one header line", () => {
    const text = "\uFEFFstart,end,country_code\r\n\r\n1.0.0.0,1.0.0.255,AU\r\n\n1.0.1.0,1.0.1.255,CN\r\n";
    const data = read(text, "country-csv");
    expect(plain(data, 4).map((row) => row[2])).toEqual([{ country_code: "AU" }, { country_code: "CN" }]);
  });

  test("a TSV header", () => {
    expect(read("range_start\trange_end\tAS_number\tcountry_code\tAS_description\n1.0.0.0\t1.0.0.255\t1\tUS\tX", "iptoasn-tsv").v4.rows).toBe(1);
  });

  test("a header is the file's first line only: after blank lines it is a malformed row", () => {
    expect(() => read("\n\nrange_start\trange_end\tAS_number\tcountry_code\tAS_description\n1.0.0.0\t1.0.0.255\t1\tUS\tX", "iptoasn-tsv", "t.tsv")).toThrow(
      /^t\.tsv:3: the start "range_start" is not an IP address or a decimal number$/,
    );
  });

  test("a first line of words without the layout's number of fields is no header: a one-line error page is refused", () => {
    expect(() => read("Rate limit exceeded\n", "asn-csv", "asn.csv")).toThrow(/^asn\.csv:1: expected 4 fields \(start,end,autonomous_system_number,autonomous_system_organization\), found 1$/);
    expect(() => read("Service Unavailable", "country-csv", "c.csv")).toThrow(/^c\.csv:1: expected 3 fields/);
    expect(() => read("start,end,asn\n1.0.0.0,1.0.0.255,1,x", "asn-csv", "a.csv")).toThrow(/^a\.csv:1: /);
    expect(() => read("start,end,country_code,extra\n1.0.0.0,1.0.0.255,AU", "country-csv", "c.csv")).toThrow(/^c\.csv:1: /);
    // The layout's number of fields, quoted commas inside a field counted once.
    expect(read('start,end,asn,"as name, organisation"\n1.0.0.0,1.0.0.255,1,x', "asn-csv").v4.rows).toBe(1);
  });

  test("a header with quoted column names", () => {
    expect(read('"start","end","country_code"\n1.0.0.0,1.0.0.255,AU', "country-csv").v4.rows).toBe(1);
  });

  test("quoted start and end", () => {
    const data = read('"1.0.0.0","1.0.0.255",13335,"Cloudflare, Inc."\n"16777472",16777472,1,x', "asn-csv", "asn-ipv4.csv");
    expect(plain(data, 4)).toEqual([
      [s(n("1.0.0.0")), s(n("1.0.0.255")), { asn: 13335, as_name: "Cloudflare, Inc." }],
      ["16777472", "16777472", { asn: 1, as_name: "x" }],
    ]);
  });

  test("a last line without a newline, and one with a lone CR", () => {
    expect(read("1.0.0.0,1.0.0.255,AU\n1.0.1.0,1.0.1.255,CN", "country-csv").v4.rows).toBe(2);
    expect(read("1.0.0.0,1.0.0.255,AU\r\n\r", "country-csv").v4.rows).toBe(1);
  });

  test("an empty file", () => {
    const data = read("", "asn-csv");
    expect(data.v4).toEqual({ rows: 0, ranges: [] });
    expect(data.v6).toEqual({ rows: 0, ranges: [] });
    expect(data.values).toEqual([]);
  });

  test("rows inside ::ffff:0:0/96 are the IPv4 ranges they carry, however written; the later row still wins", () => {
    const data = read("::ffff:1.2.3.0,::ffff:1.2.3.255,AU\n::ffff:0102:0400,::FFFF:102:4ff,NZ\n1.2.3.128,1.2.3.255,US\n::ffff:1.2.3.200,::ffff:1.2.3.200,DE", "country-csv");
    expect(plain(data, 6)).toEqual([]);
    expect(plain(data, 4)).toEqual([
      [s(0x01020300n), s(0x0102037fn), { country_code: "AU" }],
      [s(0x01020380n), s(0x010203c7n), { country_code: "US" }],
      [s(0x010203c8n), s(0x010203c8n), { country_code: "DE" }],
      [s(0x010203c9n), s(0x010203ffn), { country_code: "US" }],
      [s(0x01020400n), s(0x010204ffn), { country_code: "NZ" }],
    ]);
    expect(data.v4.rows).toBe(4);
    expect(data.v6.rows).toBe(0);
    // Decimal IPv6 bounds inside the block too; a row reaching out of it stays IPv6.
    const decimal = read(`${n("::ffff:5.6.7.0")},${n("::ffff:5.6.7.255")},FR\n${n("::fffe:ffff:ffff")},${n("::ffff:0.0.0.9")},ES`, "country-csv", "x-ipv6.csv");
    expect(plain(decimal, 4)).toEqual([[s(0x05060700n), s(0x050607ffn), { country_code: "FR" }]]);
    expect(plain(decimal, 6)).toEqual([[s(n("::fffe:ffff:ffff")), s(n("::ffff:0.0.0.9")), { country_code: "ES" }]]);
  });

  test("progress in characters, every 65536 lines, ending at the total", () => {
    const lines = Array.from({ length: 140000 }, (_, i) => `${i * 2},${i * 2 + 1},AU`);
    const text = lines.join("\n");
    const calls: Array<[number, number]> = [];
    const data = readDelimited(text, { format: "country-csv", file: "x.csv", family: 4 }, (done, total) => calls.push([done, total]));
    expect(data.v4.rows).toBe(140000);
    expect(calls.length).toBe(3);
    expect(calls.every(([, total]) => total === text.length)).toBe(true);
    expect(calls[0]?.[0]).toBe(lines.slice(0, 65536).join("\n").length + 1);
    expect(calls[1]?.[0]).toBe(lines.slice(0, 131072).join("\n").length + 1);
    expect(calls[2]).toEqual([text.length, text.length]);
  });
});

describe("overlapping rows: the later row wins", () => {
  const text = [
    "10.0.0.0,10.0.0.255,AA", // 0
    "10.0.0.16,10.0.0.31,BB", // nested: splits AA
    "10.0.0.0,10.0.0.0,CC", // the very first address
    "10.0.0.255,10.0.1.15,DD", // straddles AA's end
    "10.0.0.20,10.0.0.20,AA", // same value as the outer row, later
    "9.255.255.255,10.0.0.1,EE", // straddles the start
  ].join("\n");

  test("every boundary exactly", () => {
    const data = read(text, "country-csv");
    const code = (address: string) => at(data, 4, n(address))?.country_code;
    expect(code("9.255.255.254")).toBeUndefined();
    expect(code("9.255.255.255")).toBe("EE");
    expect(code("10.0.0.0")).toBe("EE");
    expect(code("10.0.0.1")).toBe("EE");
    expect(code("10.0.0.2")).toBe("AA");
    expect(code("10.0.0.15")).toBe("AA");
    expect(code("10.0.0.16")).toBe("BB");
    expect(code("10.0.0.19")).toBe("BB");
    expect(code("10.0.0.20")).toBe("AA");
    expect(code("10.0.0.21")).toBe("BB");
    expect(code("10.0.0.31")).toBe("BB");
    expect(code("10.0.0.32")).toBe("AA");
    expect(code("10.0.0.254")).toBe("AA");
    expect(code("10.0.0.255")).toBe("DD");
    expect(code("10.0.1.15")).toBe("DD");
    expect(code("10.0.1.16")).toBeUndefined();
    expect(data.v4.rows).toBe(6);
    expectWellFormed(data);
  });

  test("the same as the rule, address by address", () => {
    const data = read(text, "country-csv");
    const rows = text.split("\n").map((line) => line.split(","));
    for (let a = n("9.255.255.250"); a <= n("10.0.1.20"); a++) {
      const winner = rows.findLast(([start, end]) => n(start as string) <= a && a <= n(end as string));
      expect(at(data, 4, a)?.country_code).toBe(winner?.[2]);
    }
  });

  test("random rows agree with flattenRows (and with a sorted disjoint file read as is)", () => {
    let seed = 7;
    const random = (limit: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % limit;
    };
    for (let round = 0; round < 150; round++) {
      // Disjoint and in order; in order by start, overlapping; anywhere.
      const kind = round % 3;
      const rows: Array<[number, number, string]> = [];
      let next = random(5);
      for (let i = 0; i < 30; i++) {
        const start = kind === 2 ? random(200) : next;
        const end = start + random(kind === 0 ? 4 : 30);
        next = kind === 0 ? end + 1 + random(3) : start + random(6);
        rows.push([start, end, ["AU", "NZ", "US"][random(3)] as string]);
      }
      const data = read(rows.map((row) => row.join(",")).join("\n"), "country-csv", "t-ipv4.csv");
      const expected = flattenRows(rows.map(([start, end, code]) => ({ start: BigInt(start), end: BigInt(end), value: code })));
      expect(data.v4.ranges.map((r) => [r.start, r.end, data.values[r.value]?.country_code])).toEqual(expected.map((r) => [r.start, r.end, r.value]));
      expect(data.v4.rows).toBe(30);
    }
  });

  test("IPv6 overlaps too, with text and decimal rows mixed", () => {
    const data = read(`2001:db8::,2001:db8::ffff,AA\n${n("2001:db8::10")},${n("2001:db8::1f")},BB`, "country-csv", "x-ipv6.csv");
    expect(plain(data, 6)).toEqual([
      [s(n("2001:db8::")), s(n("2001:db8::f")), { country_code: "AA" }],
      [s(n("2001:db8::10")), s(n("2001:db8::1f")), { country_code: "BB" }],
      [s(n("2001:db8::20")), s(n("2001:db8::ffff")), { country_code: "AA" }],
    ]);
  });
});

describe("the family of decimal addresses", () => {
  test.each([
    ["asn-ipv4-num.csv", 4],
    ["asn-ipv6-num.csv", 6],
    ["/srv/data/dbip-city-ipv6-num.csv", 6],
    ["ip2asn-v4-u32.tsv", 4],
    ["ip2asn-v6.tsv", 6],
    ["IP2ASN-V4.TSV", 4],
    ["data-v4/asn.csv", undefined],
    ["ip2asn-combined.tsv", undefined],
    ["asn.csv", undefined],
    ["ipv4-and-ipv6.csv", undefined],
    ["release-v42.csv", undefined],
  ] as const)("%s → %p", (file, family) => {
    expect(familyFromFileName(file)).toBe(family);
  });

  test("the option wins over the name", () => {
    expect(read("1,2,AU", "country-csv", "asn-ipv4-num.csv", 6).v6.rows).toBe(1);
  });

  test("no option and a name that does not say: a clear error", () => {
    expect(() => read("1.0.0.0,1.0.0.255,AU\n16777216,16777471,AU", "country-csv", "countries.csv")).toThrow(
      "countries.csv: the addresses are decimal numbers, which do not say whether they are IPv4 or IPv6; give the family (--family 4 or 6), or put ipv4 or ipv6 in the file name",
    );
  });

  test("text addresses need no family", () => {
    expect(read("1.0.0.0,1.0.0.255,AU\n2001::,2001::1,NZ", "country-csv", "countries.csv").v6.rows).toBe(1);
  });
});

describe("malformed lines: file and line number, and nothing returned", () => {
  const good = "1.0.0.0,1.0.0.255,13335,Cloudflare\n\n";
  test.each([
    ["too few fields", "1.0.1.0,1.0.1.255,13335", /^f\.csv:3: expected 4 fields \(start,end,autonomous_system_number,autonomous_system_organization\), found 3$/],
    ["too many fields", "1.0.1.0,1.0.1.255,13335,a,b", /^f\.csv:3: expected 4 fields .*, found 5$/],
    ["one field", "1.0.1.0", /^f\.csv:3: expected 4 fields .*, found 1$/],
    ["two fields", "1.0.1.0,1.0.1.255", /^f\.csv:3: expected 4 fields .*, found 2$/],
    ["a quoted start, too few fields", '"1.0.1.0",1.0.1.255', /^f\.csv:3: expected 4 fields .*, found 2$/],
    ["not an address", "1.0.1,1.0.1.255,1,x", /^f\.csv:3: the start "1\.0\.1" is not an IP address or a decimal number$/],
    ["an octet past 255", "1.0.1.0,1.0.1.256,1,x", /^f\.csv:3: the end "1\.0\.1\.256" is not an IP address or a decimal number$/],
    ["leading zeros in an address", "1.0.1.00,1.0.1.255,1,x", /^f\.csv:3: the start "1\.0\.1\.00" is not an IP address/],
    ["spaces", "1.0.1.0, 1.0.1.255,1,x", /^f\.csv:3: the end " 1\.0\.1\.255" is not an IP address/],
    ["an empty start", ",1.0.1.255,1,x", /^f\.csv:3: the start "" is not an IP address/],
    ["a prefix", "1.0.1.0/24,1.0.1.255,1,x", /^f\.csv:3: the start "1\.0\.1\.0\/24" is not an IP address/],
    ["a negative number", "-1,5,1,x", /^f\.csv:3: the start "-1" is not an IP address or a decimal number$/],
    ["end before start", "1.0.1.255,1.0.1.0,1,x", /^f\.csv:3: the range ends before it starts$/],
    ["mixed families", "1.0.1.0,2001::,1,x", /^f\.csv:3: the range starts with an IPv4 address and ends with an IPv6 one$/],
    ["mixed families, mapped", "::ffff:1.0.1.0,1.0.1.255,1,x", /^f\.csv:3: the range starts with an IPv6 address and ends with an IPv4 one$/],
    ["an AS number with a prefix", "1.0.1.0,1.0.1.255,AS13335,x", /^f\.csv:3: the AS number "AS13335" is not an integer from 0 to 4294967295$/],
    ["an AS number too large", "1.0.1.0,1.0.1.255,4294967296,x", /^f\.csv:3: the AS number "4294967296" is not/],
    ["a negative AS number", "1.0.1.0,1.0.1.255,-1,x", /^f\.csv:3: the AS number "-1" is not/],
    ["a fractional AS number", "1.0.1.0,1.0.1.255,1.5,x", /^f\.csv:3: the AS number "1\.5" is not/],
    ["an unterminated quote", '1.0.1.0,1.0.1.255,1,"x', /^f\.csv:3: unterminated quoted field/],
    ["text after a quoted field", '1.0.1.0,1.0.1.255,1,"x"y', /^f\.csv:3: unexpected text after a quoted field/],
    ["a second header", "start,end,asn,name", /^f\.csv:3: the start "start" is not an IP address or a decimal number$/],
  ])("%s", (_, line, message) => {
    expect(() => read(`${good}${line}\n1.0.2.0,1.0.2.255,1,x`, "asn-csv", "f.csv")).toThrow(message);
  });

  test.each([
    ["past the last IPv4 address", "16777216,4294967296,1,x", 4, /^f\.csv:1: the end "4294967296" is past the last IPv4 address \(4294967295\)$/],
    ["far past the last IPv4 address", "99999999999,1,1,x", 4, /^f\.csv:1: the start "99999999999" is past the last IPv4 address/],
    ["past the last IPv6 address", "1,340282366920938463463374607431768211456,1,x", 6, /^f\.csv:1: the end "340282366920938463463374607431768211456" is past the last IPv6 address/],
    ["far past the last IPv6 address", `1,${"9".repeat(60)},1,x`, 6, /^f\.csv:1: the end "9{60}" is past the last IPv6 address/],
    ["a decimal with a leading zero", "016777216,16777217,1,x", 4, /^f\.csv:1: the start "016777216" is a decimal number with a leading zero$/],
    ["an IPv6 text in a file read as IPv4", "2001::,2001::1,1,x", 4, /^f\.csv:1: the range is IPv6, but the file is read as IPv4$/],
    ["an IPv4 text in a file read as IPv6", "1.0.0.0,1.0.0.1,1,x", 6, /^f\.csv:1: the range is IPv4, but the file is read as IPv6$/],
  ] as const)("%s", (_, line, family, message) => {
    expect(() => read(line, "asn-csv", "f.csv", family)).toThrow(message);
  });

  test.each([
    ["a three-letter country", "country-csv", "1.0.0.0,1.0.0.255,USA", /^f\.csv:2: the country code "USA" is not two letters$/],
    ["a digit in a country", "country-csv", "1.0.0.0,1.0.0.255,U1", /^f\.csv:2: the country code "U1" is not two letters$/],
    ["None in a country-csv", "country-csv", "1.0.0.0,1.0.0.255,None", /^f\.csv:2: the country code "None" is not two letters$/],
    ["a latitude past 90", "city-csv", "1.0.0.0,1.0.0.255,AU,a,b,c,d,90.5,0,e", /^f\.csv:2: the latitude "90\.5" is not a number from -90 to 90$/],
    ["a longitude past -180", "city-csv", "1.0.0.0,1.0.0.255,AU,a,b,c,d,0,-180.01,e", /^f\.csv:2: the longitude "-180\.01" is not a number from -180 to 180$/],
    ["a latitude that is not a number", "city-csv", "1.0.0.0,1.0.0.255,AU,a,b,c,d,north,0,e", /^f\.csv:2: the latitude "north" is not a number/],
    ["a hex longitude", "city-csv", "1.0.0.0,1.0.0.255,AU,a,b,c,d,0,0x10,e", /^f\.csv:2: the longitude "0x10" is not a number/],
    ["an infinite latitude", "city-csv", "1.0.0.0,1.0.0.255,AU,a,b,c,d,1e400,0,e", /^f\.csv:2: the latitude "1e400" is not a number/],
    ["a city row with 9 fields", "city-csv", "1.0.0.0,1.0.0.255,AU,a,b,c,d,0,0", /^f\.csv:2: expected 10 fields \(start,end,country_code,state1,state2,city,postcode,latitude,longitude,timezone\), found 9$/],
    ["a TSV row with commas", "iptoasn-tsv", "1.0.0.0,1.0.0.255,1,US,x", /^f\.csv:2: expected 5 fields \(range_start<TAB>range_end<TAB>AS_number<TAB>country_code<TAB>AS_description\), found 1$/],
    ["a TSV row with 4 fields", "iptoasn-tsv", "1.0.0.0\t1.0.0.255\t1\tUS", /^f\.csv:2: expected 5 fields .*, found 4$/],
    ["a bad AS number in a TSV", "iptoasn-tsv", "1.0.0.0\t1.0.0.255\tx\tUS\ty", /^f\.csv:2: the AS number "x" is not/],
  ] as const)("%s", (_, format, line, message) => {
    const first = { "country-csv": "2.0.0.0,2.0.0.255,AU", "city-csv": "2.0.0.0,2.0.0.255,AU,,,,,,,", "iptoasn-tsv": "2.0.0.0\t2.0.0.255\t1\tUS\tx" }[format];
    expect(() => read(`${first}\n${line}`, format, "f.csv")).toThrow(message);
  });

  test("a bad value is an error even where an earlier good row had the same text", () => {
    // The reader remembers the values of a row's text; a bad row must not slip through.
    expect(() => read("1.0.0.0,1.0.0.255,AU\n1.0.1.0,1.0.1.255,AU\n1.0.2.0,1.0.2.255,A", "country-csv", "f.csv")).toThrow(/^f\.csv:3: /);
  });

  test("the line number counts blank lines and the header", () => {
    expect(() => read("start,end,country_code\r\n\r\n1.0.0.0,1.0.0.255,AU\r\n\r\n1.0.0.0,1.0.0.255,AUS\r\n", "country-csv", "g.csv")).toThrow(/^g\.csv:5: /);
  });

  test("an error on the last line of a long file still throws", () => {
    const lines = Array.from({ length: 100000 }, (_, i) => `${i},${i},1,x`);
    lines.push("5,4,1,x");
    expect(() => read(lines.join("\n"), "asn-csv", "asn-ipv4-num.csv")).toThrow(/^asn-ipv4-num\.csv:100001: the range ends before it starts$/);
  });

  test("a long field is cut in the message", () => {
    expect(() => read(`${"x".repeat(500)},end,country_code\n${"1".repeat(5)}.0.0.0,1.0.0.0,AU`, "country-csv", "f.csv")).toThrow(/^f\.csv:2: the start "11111\.0\.0\.0" is not/);
    let message = "";
    try {
      read(`1.0.0.0,1.0.0.0,${"Y".repeat(500)}`, "country-csv", "f.csv");
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toStartWith('f.csv:1: the country code "YYYY');
    expect(message.length).toBeLessThan(150);
  });
});
