import { showingControls } from "../access/plain-text.ts";

/**
 * Lays rows out as aligned columns under a header, for people; `--json` is for programs.
 * A cell's control and bidirectional characters are written out (showingControls), so
 * that a key name holding one cannot reorder its row.
 */
export function formatTable(header: readonly string[], shown: readonly (readonly string[])[]): string {
  const rows = shown.map((row) => row.map(showingControls));
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** A limit for people: `unlimited` for null, digits grouped otherwise. */
export function formatLimit(value: number | null): string {
  return value === null ? "unlimited" : value.toLocaleString("en-US");
}
