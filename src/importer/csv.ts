/**
 * Splits one CSV line into fields (RFC 4180: a field may be quoted, and a quote inside a
 * quoted field is doubled). The ip-location-db files put one record on a line.
 */
export function parseCsvLine(line: string): string[] {
  const fields: string[] = [];
  let i = 0;
  for (;;) {
    if (line.charCodeAt(i) === 34 /* " */) {
      let value = "";
      i++;
      for (;;) {
        const quote = line.indexOf('"', i);
        if (quote < 0) throw new Error(`unterminated quoted field in: ${line.slice(0, 80)}`);
        value += line.slice(i, quote);
        if (line.charCodeAt(quote + 1) === 34) {
          value += '"';
          i = quote + 2;
          continue;
        }
        i = quote + 1;
        break;
      }
      fields.push(value);
      if (i >= line.length) return fields;
      if (line.charCodeAt(i) !== 44 /* , */) throw new Error(`unexpected text after a quoted field in: ${line.slice(0, 80)}`);
      i++;
    } else {
      const comma = line.indexOf(",", i);
      if (comma < 0) {
        fields.push(line.slice(i));
        return fields;
      }
      fields.push(line.slice(i, comma));
      i = comma + 1;
    }
  }
}

/** The non-empty lines of a text file (LF or CRLF), with their 1-based line numbers. */
export function* csvLines(text: string): Generator<[line: string, number: number]> {
  let start = 0;
  let number = 0;
  while (start < text.length) {
    let end = text.indexOf("\n", start);
    if (end < 0) end = text.length;
    number++;
    const line = text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end);
    if (line !== "") yield [line, number];
    start = end + 1;
  }
}
