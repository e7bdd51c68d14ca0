import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { ConfigError } from "./config-error.ts";
import { SETTINGS, type SettingName } from "./settings.ts";

/**
 * The configuration file (`--config PATH`, `IPLOOKUP_CONFIG`): TOML, one top-level key a
 * setting, named as its flag without the dashes (`port = 8080`, `trust-proxy =
 * ["10.0.0.5"]`, `admin-port = "off"`). Values are strings, whole numbers, or, for a
 * list (trust-proxy alone), an array of strings; each is turned into the text its flag
 * would take and read by the same parser, so a file can say nothing a flag cannot.
 * Anything else (an unknown key, a table, a boolean, a decimal number such as 8080.0, an
 * array for a setting that takes one value, a value its flag would refuse) is refused
 * with its line.
 */
export interface ConfigFile {
  /** The file, absolute. */
  readonly path: string;
  /** Flag name → the value as a flag's text, and the line it is on (1-based). */
  readonly values: ReadonlyMap<string, { readonly text: string; readonly line: number }>;
}


/** The path given by --config or IPLOOKUP_CONFIG, if any (a flag wins). */
export function configPathFrom(flags: Readonly<Record<string, unknown>>, env: Readonly<Record<string, string | undefined>>): { path: string; name: string } | null {
  if (typeof flags.config === "string") {
    if (flags.config.trim() === "") throw new ConfigError("--config: must not be empty");
    return { path: resolve(flags.config), name: "--config" };
  }
  const fromEnv = env.IPLOOKUP_CONFIG;
  if (fromEnv !== undefined && fromEnv !== "") return { path: resolve(fromEnv), name: "IPLOOKUP_CONFIG" };
  return null;
}

/**
 * Reads and checks a configuration file; every fault is a ConfigError naming PATH:LINE.
 * `settings`: the settings it may hold (serve's: SERVE_SETTING_NAMES), so that a key the
 * command would not read is refused rather than ignored.
 */
export function readConfigFile(path: string, settings: readonly SettingName[], name = "--config"): ConfigFile {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code === "EISDIR" ? "a folder, not a file" : (error as Error).message;
    throw new ConfigError(`${name}: cannot read ${path}: ${why}`);
  }
  return parseConfigText(decodeUtf8(bytes, path), path, settings);
}

/**
 * A TOML file is UTF-8: bytes that are not are refused with their line, never replaced
 * (a path with U+FFFD in it names another file). A BOM stays, as the parser reads it.
 */
function decodeUtf8(bytes: Uint8Array, path: string): string {
  const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
  try {
    return decoder.decode(bytes);
  } catch {
    // A byte 0x0A is a line feed and never part of a longer UTF-8 sequence, so the
    // lines can be decoded one by one.
    let start = 0;
    for (let line = 1; ; line++) {
      const end = bytes.indexOf(0x0a, start);
      try {
        decoder.decode(bytes.subarray(start, end < 0 ? bytes.length : end));
      } catch {
        throw new ConfigError(`${path}:${line}: not valid TOML: bytes that are not UTF-8 (a TOML file is UTF-8 text)`);
      }
      if (end < 0) throw new ConfigError(`${path}: not valid TOML: bytes that are not UTF-8 (a TOML file is UTF-8 text)`);
      start = end + 1;
    }
  }
}

/** Parses the text of a configuration file found at `path` (named in messages). */
export function parseConfigText(text: string, path: string, settings: readonly SettingName[]): ConfigFile {
  const known = new Map(settings.map((name) => [SETTINGS[name].flag, SETTINGS[name] as { parse: (text: string, name: string) => unknown; list: boolean }]));
  let parsed: Record<string, unknown>;
  try {
    parsed = Bun.TOML.parse(text) as Record<string, unknown>;
  } catch (error) {
    const message = (error as Error).message;
    const line = syntaxErrorLine(text, message);
    throw new ConfigError(`${path}${line ? `:${line}` : ""}: not valid TOML: ${message.replace(/^TOML Parse error:\s*/, "")}`);
  }
  // A file written on Windows ends its lines with CR LF.
  const lines = text.split(/\r?\n/);
  const keyLines = topLevelKeyLines(text, Object.keys(parsed).length);
  const values = new Map<string, { text: string; line: number }>();
  for (const [key, value] of Object.entries(parsed)) {
    const line = keyLines.get(key) ?? lineByText(lines, key);
    const at = `${path}:${line}`;
    const setting = known.get(key);
    if (!setting) {
      const hint = isPlainObject(value) ? " (the file has no tables: every setting is a top-level key)" : "";
      throw new ConfigError(`${at}: unknown setting "${key}"${hint}; the settings are ${[...known.keys()].join(", ")}`);
    }
    if (Array.isArray(value) && !setting.list) {
      const lists = settings.filter((name) => SETTINGS[name].list).map((name) => SETTINGS[name].flag);
      throw new ConfigError(`${at}: ${key}: an array, but ${key} takes one value${lists.length > 0 ? ` (only ${lists.join(", ")} takes a list)` : ""}`);
    }
    // Judged only on a line found: without one there is no text to judge, and the parser
    // has read a whole number either way.
    if (typeof value === "number" && Number.isSafeInteger(value) && line > 0 && !isIntegerLiteral(valueOnLine(lines[line - 1] ?? ""))) {
      throw new ConfigError(`${at}: ${key}: ${valueOnLine(lines[line - 1] ?? "") || value} is written as a decimal number (with a point or an exponent); write the whole number, ${value}`);
    }
    const text = valueText(value, `${at}: ${key}`);
    // Every value is checked, also one a flag or variable overrides today: a file is valid
    // or not, whatever the command line it is read with.
    setting.parse(text, `${at}: ${key}`);
    values.set(key, { text, line });
  }
  return { path, values };
}

function valueText(value: unknown, name: string): string {
  if (typeof value === "string") return value;
  if (typeof value === "number" && Number.isSafeInteger(value)) return String(value);
  if (Array.isArray(value) && value.every((item) => typeof item === "string")) return value.join(",");
  const shown = typeof value === "number" ? String(value) : Array.isArray(value) ? "an array of other than strings" : isPlainObject(value) ? "a table" : JSON.stringify(value);
  throw new ConfigError(`${name}: ${shown} is not a value for this setting (a string, a whole number, or an array of strings)`);
}

/**
 * The first line that looks like it assigns a top-level key, for a key the parser's
 * search (topLevelKeyLines) did not reach: past its 5,000 lines. Keys may be bare or
 * quoted; 0 when not found.
 */
function lineByText(lines: readonly string[], key: string): number {
  const escaped = key.replace(/[.*+?^${}()|[\]\\-]/g, "\\$&");
  const pattern = new RegExp(`^\\s*(?:\\[\\[?\\s*)?(?:${escaped}|"${escaped}"|'${escaped}')\\s*[=.\\]]`);
  return lines.findIndex((line) => pattern.test(line)) + 1;
}

/** The text after the `=` of a `key = value` line, without a comment. */
function valueOnLine(line: string): string {
  const equals = line.indexOf("=");
  return equals < 0 ? "" : line.slice(equals + 1).replace(/#.*$/, "").trim();
}

/**
 * Whether a TOML number is written as an integer (`8080`, `+8080`, `8_080`, `0x1F90`):
 * the parser gives 8080.0 and 8e3 as the same numbers as 8080 and 8000, and a decimal
 * is no value of a setting that counts.
 */
function isIntegerLiteral(text: string): boolean {
  return /^[+-]?(?:0x[0-9a-f_]+|0o[0-7_]+|0b[01_]+|[0-9][0-9_]*)$/i.test(text);
}

function isPlainObject(value: unknown): boolean {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/**
 * The line each top-level key is written on, as the parser reads the file: its first
 * lines are parsed one more at a time, and a key first held by a prefix is on the line
 * after the last prefix that parsed before it (a list or a multi-line string goes on for
 * lines; a prefix cut inside one fails). Matching the text instead took a line inside a
 * multi-line string for a key, and missed a quoted key written with escapes
 * (`"\u0070ort"`). Files are short, and the search stops at 5,000 lines or once `count`
 * keys are found; a key not found is on line 0.
 */
function topLevelKeyLines(text: string, count: number): Map<string, number> {
  const ends: number[] = [];
  for (let at = text.indexOf("\n"); at >= 0; at = text.indexOf("\n", at + 1)) ends.push(at);
  ends.push(text.length);
  const lines = new Map<string, number>();
  let lastParsed = 0;
  for (let line = 1; line <= Math.min(ends.length, 5000) && lines.size < count; line++) {
    let prefix: Record<string, unknown>;
    try {
      prefix = Bun.TOML.parse(`${text.slice(0, ends[line - 1])}\n`) as Record<string, unknown>;
    } catch {
      continue;
    }
    for (const key of Object.keys(prefix)) if (!lines.has(key)) lines.set(key, lastParsed + 1);
    lastParsed = line;
  }
  return lines;
}

/**
 * The line of a TOML syntax error. Bun's parser names none (its error's `line` is the
 * caller's), so the file's first lines are parsed one more at a time: the fault is on
 * the first line whose prefix fails with the same message as the whole file (a prefix
 * cut inside a multi-line string fails differently, and is passed over). Files are
 * short, and the search stops at 5,000 lines; 0 when it finds nothing.
 */
function syntaxErrorLine(text: string, message: string): number {
  const lines = text.split("\n");
  let firstFailure = 0;
  for (let count = 1; count <= Math.min(lines.length, 5000); count++) {
    try {
      Bun.TOML.parse(`${lines.slice(0, count).join("\n")}\n`);
    } catch (error) {
      if ((error as Error).message === message) return count;
      if (firstFailure === 0) firstFailure = count;
    }
  }
  return firstFailure;
}
