/** Lays rows out as aligned columns under a header, for people; `--json` is for programs. */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** A limit for people: `unlimited` for null, digits grouped otherwise. */
export function formatLimit(value: number | null): string {
  return value === null ? "unlimited" : value.toLocaleString("en-US");
}
