import { expect, test } from "bun:test";
import { checksumFor } from "../../../src/importer/fetch/checksum.ts";

const A = "a".repeat(64);
const B = "B".repeat(64);

test("checksum files: MaxMind's HEX  NAME, sha256sum's binary mark, BSD's form, a bare HEX, and the line naming the file", () => {
  expect(checksumFor(`${A}  GeoLite2-City_20261120.tar.gz\n`, "GeoLite2-City_20261120.tar.gz")).toBe(A);
  // One line: it is the download's, whatever name it gives (MaxMind names the dated file).
  expect(checksumFor(`${A}  GeoLite2-City_20261120.tar.gz\n`, "download")).toBe(A);
  expect(checksumFor(`${B} *x.mmdb.gz`, "x.mmdb.gz")).toBe("b".repeat(64));
  expect(checksumFor(`SHA256 (x.mmdb.gz) = ${A}`, "x.mmdb.gz")).toBe(A);
  expect(checksumFor(`${A}\n`, "anything")).toBe(A);
  expect(checksumFor(`${A}  one.mmdb\n${B}  two.mmdb\n`, "two.mmdb")).toBe("b".repeat(64));
  expect(checksumFor(`${A}  one.mmdb\n${B}  two.mmdb\n`, "three.mmdb")).toBeUndefined();
  expect(checksumFor("<html>not found</html>", "x")).toBeUndefined();
});
