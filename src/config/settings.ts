import { isShortMappedPrefix, MAPPED_PREFIX_HINT, parseCidr, type Cidr } from "../address/cidr.ts";
import { parseAddress } from "../address/parse.ts";
import { ConfigError } from "./config-error.ts";
import { availableParallelism } from "node:os";
import { LOG_LEVELS, type LogLevel } from "../log/logger.ts";
import { parseDownloadTimeout, parseUpdateEvery } from "./duration.ts";
import { parseBetweenOneAnd, parseByteSize, parseNonEmpty, parsePort } from "./options.ts";
import { absolutePath, defaultDataPath, defaultStatePath } from "./paths.ts";
import type { ConfigFile } from "./config-file.ts";
import { isPostgresUrl, redactUrl } from "../store/redact-url.ts";

type Env = Readonly<Record<string, string | undefined>>;

/**
 * One configurable value: its flag, its environment variable, how its text is read and
 * its default. This table is the only place that reads configuration; a flag wins over
 * its environment variable, which wins over the configuration file (`serve --config`,
 * where a setting is named as its flag: config-file.ts), which wins over the default.
 */
export interface Setting<T> {
  readonly flag: string;
  readonly env: string;
  readonly help: string;
  readonly parse: (text: string, name: string) => T;
  readonly fallback: (env: Env) => T;
  /** Whether the value is a list (comma-separated as a flag, an array in the configuration file). */
  readonly list: boolean;
}

function setting<T>(flag: string, help: string, parse: Setting<T>["parse"], fallback: Setting<T>["fallback"], list = false): Setting<T> {
  return { flag, env: `IPLOOKUP_${flag.toUpperCase().replaceAll("-", "_")}`, help, parse, fallback, list };
}

function parseCidrList(text: string, name: string): Cidr[] {
  return text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")
    .map((part) => {
      const cidr = parseCidr(part);
      if (!cidr) throw new ConfigError(`${name}: "${part}" is not an address or CIDR block${isShortMappedPrefix(part) ? ` (${MAPPED_PREFIX_HINT})` : ""}`);
      return cidr;
    });
}

/** A file path, shown and used absolute (see absolutePath); `:memory:` and URLs as given. */
function parsePath(text: string, name: string): string {
  return absolutePath(parseNonEmpty(text, name));
}

/** A file path that has no default. */
function parseOptionalPath(text: string, name: string): string | null {
  return parsePath(text, name);
}

/**
 * Where state lives: a SQLite file's path, or a `postgres://` (`postgresql://`) URL. A URL
 * is read without the blanks around it (a space pasted before it, a tab after it in an
 * environment file). Any other text holding `://` is refused rather than taken for a
 * file's path: a folder named after it, its password included, would be made, and the
 * path would be printed. The refusal shows the text without its password. So is text that
 * starts with another scheme and a colon (`file:/srv/state.db`: a folder `file:` would be
 * made), and a path that ends with `/` (a folder's).
 */
export function parseState(text: string, name: string): string {
  const trimmed = text.trim();
  if (isPostgresUrl(trimmed)) return trimmed;
  if (trimmed.includes("://")) {
    const shown = hidePassword(trimmed);
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(trimmed)) {
      throw new ConfigError(`${name}: "${shown}" is a URL iplookup cannot open: give a SQLite file's path, or a postgres:// (postgresql://) URL of a PostgreSQL database`);
    }
    throw new ConfigError(`${name}: "${shown}" is neither a SQLite file's path nor a URL (a URL starts with its scheme, as postgres://): give a SQLite file's path, or a postgres:// (postgresql://) URL of a PostgreSQL database`);
  }
  // SQLite's own URI file names (file:/srv/state.db), a URL without its // (sqlite:state.db).
  const scheme = /^[a-z][a-z0-9+.-]*:/i.exec(trimmed)?.[0];
  if (scheme !== undefined) {
    throw new ConfigError(
      `${name}: "${hidePassword(trimmed)}" starts with a URL's scheme (${scheme}), and iplookup opens no URL but postgres://: give a SQLite file's path (./ before a file name that holds a colon), or a postgres:// (postgresql://) URL of a PostgreSQL database`,
    );
  }
  // A folder's path would make a file named after the folder, beside it.
  if (text.endsWith("/")) throw new ConfigError(`${name}: "${text}" ends with /, so it names a folder: give the state file's path in it (${text}state.db)`);
  return parsePath(text, name);
}

/**
 * `text` with a URL's password hidden, also where no scheme stands right before `://`
 * (`'postgres://…'` quoted, `://user:pw@host`) and where the password holds a blank
 * (`mysql://u:p ss@h`): from the first `:` after `://` to the last `@` of the whole text
 * (too much hidden is harmless, too little is not).
 */
function hidePassword(text: string): string {
  const redacted = redactUrl(text);
  const scheme = redacted.indexOf("://");
  const colon = scheme < 0 ? -1 : redacted.indexOf(":", scheme + 3);
  const at = redacted.lastIndexOf("@");
  if (colon < 0 || at < colon) return redacted;
  return `${redacted.slice(0, colon)}:***${redacted.slice(at)}`;
}

/** Host names of RFC 1123: dot-separated labels of letters, digits and inner hyphens. */
const HOST_NAME = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/**
 * An address to listen on: an IPv4 or IPv6 address (`::`, `0.0.0.0`, `127.0.0.1`), or a
 * host name (`localhost`). Something that is neither (`999.1.1.1`, `127.0.0.1:80`, a
 * bracketed or spaced text) is a bad value, refused before anything listens.
 */
function parseHost(text: string, name: string): string {
  const host = parseNonEmpty(text, name);
  const looksNumeric = /^[0-9.]+$/.test(host);
  if (parseAddress(host) !== null || (!looksNumeric && !host.includes(":") && HOST_NAME.test(host))) return host;
  throw new ConfigError(`${name}: "${host}" is not an address or host name to listen on (e.g. ::, 0.0.0.0, 127.0.0.1, localhost); give the port with its own flag`);
}

/** The most threads `serve --workers` starts: each holds a runtime and a heap of its own (tens of MiB). */
const MAX_WORKERS = 256;

/** The admin listener's port, or `off` (null): no admin listener. */
function parseAdminPort(text: string, name: string): number | null {
  return text === "off" ? null : parsePort(text, name);
}

function parseLogLevel(text: string, name: string): LogLevel {
  if (!(LOG_LEVELS as readonly string[]).includes(text)) throw new ConfigError(`${name}: "${text}" is not one of ${LOG_LEVELS.join(", ")}`);
  return text as LogLevel;
}

export const SETTINGS = {
  host: setting("host", "address to listen on (:: is every IPv6 and IPv4 address)", parseHost, () => "::"),
  port: setting("port", "TCP port to listen on (0 picks a free one)", parsePort, () => 8080),
  state: setting("state", "where keys, plans and usage live: a SQLite file, or a postgres:// URL of a PostgreSQL database", parseState, (env) => absolutePath(defaultStatePath(env))),
  data: setting("data", "SQLite file of IP ranges", parsePath, () => defaultDataPath()),
  trustProxy: setting("trust-proxy", "comma-separated CIDR blocks of proxies whose X-Forwarded-For is believed", parseCidrList, () => [] as Cidr[], true),
  maxBody: setting("max-body", "largest request body accepted (bytes, or with KiB/MiB)", parseByteSize, () => 2 * 1024 * 1024),
  logLevel: setting("log-level", "least severe log level written: debug, info, warn, error or silent", parseLogLevel, (): LogLevel => "info"),
  workers: setting("workers", `threads serving the port as one server (1 to ${MAX_WORKERS})`, parseBetweenOneAnd(MAX_WORKERS), () => Math.min(availableParallelism(), MAX_WORKERS)),
  tlsCert: setting("tls-cert", "PEM certificate (chain) for HTTPS on both listeners; with --tls-key", parseOptionalPath, (): string | null => null),
  tlsKey: setting("tls-key", "PEM private key of --tls-cert", parseOptionalPath, (): string | null => null),
  adminHost: setting("admin-host", "address the admin API and console listen on", parseHost, () => "127.0.0.1"),
  adminPort: setting("admin-port", "TCP port of the admin API and console (0 picks a free one; off: none)", parseAdminPort, (): number | null => 8081),
  updateEvery: setting("update-every", "run data update on the data file this often (24h, 6h, 30m; off)", parseUpdateEvery, (): number | null => null),
  downloadTimeout: setting("download-timeout", "the longest one download of data import or update may take (30m, 2h)", parseDownloadTimeout, () => 30 * 60_000),
  maxExpanded: setting("max-expanded", "the most that data import or update unpacks from compressed sources (bytes, or with MiB/GiB)", parseByteSize, () => 2 * 1024 ** 3),
} as const;

export type SettingName = keyof typeof SETTINGS;
export type SettingValue<N extends SettingName> = ReturnType<(typeof SETTINGS)[N]["parse"]>;

/** Where a setting's value came from, as `config check` shows it. */
export type SettingSource =
  | { readonly kind: "flag"; readonly name: string }
  | { readonly kind: "environment"; readonly name: string }
  | { readonly kind: "file"; readonly path: string; readonly line: number }
  | { readonly kind: "default" };

/**
 * Resolves one setting from the parsed flags and the environment; `fallback` replaces
 * the setting's default (the compiled binary's data default is the data it embeds).
 */
export function readSetting<N extends SettingName>(
  name: N,
  flags: Readonly<Record<string, unknown>>,
  env: Env,
  fallback?: SettingValue<N>,
): SettingValue<N> {
  return resolveSetting(name, flags, env, undefined, fallback).value;
}

/**
 * The name a setting's value was given under, as a message about it names it: its flag
 * or its environment variable; the flag also for a value of the configuration file (where
 * the setting is named as its flag; config check adds the file's line) or the default.
 */
export function givenAs(name: SettingName, flags: Readonly<Record<string, unknown>>, env: Env): string {
  const spec = SETTINGS[name];
  if (typeof flags[spec.flag] === "string") return `--${spec.flag}`;
  const fromEnv = env[spec.env];
  return fromEnv !== undefined && fromEnv !== "" ? spec.env : `--${spec.flag}`;
}

/**
 * givenAs for a value already resolved, from where it came: its flag or its environment
 * variable; the flag for a value of the configuration file (named by its line with
 * fileLine) or the default.
 */
export function sourceName(name: SettingName, source: SettingSource): string {
  return source.kind === "flag" || source.kind === "environment" ? source.name : `--${SETTINGS[name].flag}`;
}

/** Where a value of the configuration file is, as a message ends with it (`admin-port at FILE:LINE`); null for a value from elsewhere. */
export function fileLine(name: SettingName, source: SettingSource): string | null {
  return source.kind === "file" ? `${SETTINGS[name].flag} at ${source.path}:${source.line}` : null;
}

/**
 * The precedence every setting follows: a flag, then its environment variable, then the
 * configuration file (`--config`), then the default. A value is parsed where it is
 * found, and an error names that place (`--port`, `IPLOOKUP_PORT`, `FILE:LINE: port`).
 */
export function resolveSetting<N extends SettingName>(
  name: N,
  flags: Readonly<Record<string, unknown>>,
  env: Env,
  file: ConfigFile | undefined,
  fallback?: SettingValue<N>,
): { readonly value: SettingValue<N>; readonly source: SettingSource } {
  const spec = SETTINGS[name] as unknown as Setting<SettingValue<N>>;
  const fromFlag = flags[spec.flag];
  if (typeof fromFlag === "string") return { value: spec.parse(fromFlag, `--${spec.flag}`), source: { kind: "flag", name: `--${spec.flag}` } };
  const fromEnv = env[spec.env];
  if (fromEnv !== undefined && fromEnv !== "") return { value: spec.parse(fromEnv, spec.env), source: { kind: "environment", name: spec.env } };
  const fromFile = file?.values.get(spec.flag);
  if (fromFile && file) {
    return { value: spec.parse(fromFile.text, `${file.path}:${fromFile.line}: ${spec.flag}`), source: { kind: "file", path: file.path, line: fromFile.line } };
  }
  return { value: fallback !== undefined ? fallback : spec.fallback(env), source: { kind: "default" } };
}
