import type { Cidr } from "../address/cidr.ts";
import { parseAddress } from "../address/parse.ts";
import type { LogLevel } from "../log/logger.ts";
import { ConfigError } from "./config-error.ts";
import { configPathFrom, readConfigFile, type ConfigFile } from "./config-file.ts";
import { fileLine, resolveSetting, sourceName, type SettingName, type SettingSource, type SettingValue } from "./settings.ts";

/** Everything `serve` needs to know, resolved from flags, environment and defaults. */
export interface ServeConfig {
  readonly host: string;
  readonly port: number;
  readonly statePath: string;
  readonly dataPath: string;
  readonly trustProxy: readonly Cidr[];
  readonly maxBody: number;
  readonly logLevel: LogLevel;
  readonly workers: number;
  /** Where the admin API and console listen (the main thread only). */
  readonly adminHost: string;
  /** Null: no admin listener (`--admin-port off`). */
  readonly adminPort: number | null;
  /** `--update-every`: how often the main thread runs `data update` (ms), or null. */
  readonly updateEvery: number | null;
  /** `--download-timeout` (ms) and `--max-expanded` (bytes), passed to those updates. */
  readonly downloadTimeout: number;
  readonly maxExpanded: number;
  /**
   * HTTPS on both listeners: the certificate and key files (both, or neither), and the
   * two settings as they were given, for the messages about them (sourceName:
   * `--tls-cert/--tls-key`, `IPLOOKUP_TLS_CERT/IPLOOKUP_TLS_KEY`, or one of each).
   */
  readonly tls: { readonly certPath: string; readonly keyPath: string; readonly givenAs: string } | null;
}

/**
 * The settings `serve` reads: its flags, the keys its configuration file may hold, and
 * the rows of `config check`, in this order. A new serve setting is added here and read
 * below with `read`, so that its flag, variable and file key all work.
 */
export const SERVE_SETTING_NAMES = [
  "host", "port", "state", "data", "trustProxy", "maxBody", "logLevel", "workers",
  "adminHost", "adminPort", "tlsCert", "tlsKey", "updateEvery", "downloadTimeout", "maxExpanded",
] as const satisfies readonly SettingName[];

/** serve's configuration, with the file it read (if any) and where each value came from. */
export interface ExplainedServeConfig {
  readonly config: ServeConfig;
  readonly file: ConfigFile | null;
  readonly sources: Readonly<Record<(typeof SERVE_SETTING_NAMES)[number], SettingSource>>;
}

export function readServeConfig(
  flags: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  defaults: { readonly dataPath?: string } = {},
): ServeConfig {
  return explainServeConfig(flags, env, defaults).config;
}

/**
 * Resolves every serve setting: flag, then environment variable, then the file named by
 * `--config` or `IPLOOKUP_CONFIG`, then the default (settings.ts: resolveSetting).
 */
export function explainServeConfig(
  flags: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  defaults: { readonly dataPath?: string } = {},
): ExplainedServeConfig {
  const where = configPathFrom(flags, env);
  const file = where ? readConfigFile(where.path, SERVE_SETTING_NAMES, where.name) : null;
  const sources = {} as Record<(typeof SERVE_SETTING_NAMES)[number], SettingSource>;
  const read = <N extends (typeof SERVE_SETTING_NAMES)[number]>(name: N, fallback?: SettingValue<N>): SettingValue<N> => {
    const { value, source } = resolveSetting(name, flags, env, file ?? undefined, fallback);
    sources[name] = source;
    return value;
  };
  const config: ServeConfig = {
    host: read("host"),
    port: read("port"),
    statePath: read("state"),
    dataPath: read("data", defaults.dataPath),
    trustProxy: read("trustProxy"),
    maxBody: read("maxBody"),
    logLevel: read("logLevel"),
    workers: read("workers"),
    adminHost: read("adminHost"),
    adminPort: read("adminPort"),
    updateEvery: read("updateEvery"),
    downloadTimeout: read("downloadTimeout"),
    maxExpanded: read("maxExpanded"),
    tls: readTls(read("tlsCert"), read("tlsKey"), sources),
  };
  checkListenersApart(config, sources);
  return { config, file, sources };
}

/**
 * The API and the admin listener on one port of one address cannot both listen: the
 * second would fail as if another program held the port. Refused before anything
 * listens, naming both settings. The addresses overlap when they are the same, or one
 * is a wildcard that takes the other's: `::` takes every address (IPv4 too, as Linux
 * binds it by default), `0.0.0.0` every IPv4 one. Port 0 picks a free port for each.
 * Each value is named as it was given (sourceName), and a value of the file by its line
 * at the end. A host is named after its value only when an environment variable gave
 * it: a flag's is on the command line, the default's is nobody's, and the file's line
 * closes the message.
 */
function checkListenersApart(config: ServeConfig, sources: Readonly<Record<(typeof SERVE_SETTING_NAMES)[number], SettingSource>>): void {
  const { port, adminPort, host, adminHost } = config;
  if (adminPort === null || port === 0 || port !== adminPort || !addressesOverlap(host, adminHost)) return;
  const lines = (["port", "adminPort", "host", "adminHost"] as const).flatMap((name) => fileLine(name, sources[name]) ?? []);
  const fromEnvironment = (name: "host" | "adminHost") => (sources[name].kind === "environment" ? [sourceName(name, sources[name])] : []);
  const named = (names: string[]) => (names.length > 0 ? ` (${names.join(" and ")})` : "");
  const where =
    host === adminHost
      ? `on ${host}${named([...fromEnvironment("host"), ...fromEnvironment("adminHost")])}`
      : `on ${host}${named(fromEnvironment("host"))} and ${adminHost}${named(fromEnvironment("adminHost"))}, which overlap`;
  const adminPortName = sourceName("adminPort", sources.adminPort);
  const off = sources.adminPort.kind === "environment" ? `${adminPortName}=off` : `${adminPortName} off`;
  throw new ConfigError(
    `${sourceName("port", sources.port)} and ${adminPortName} name the same port, ${port}, ${where}: the API and the admin listener need one each; choose another ${adminPortName} (or ${off})${lines.length > 0 ? ` (${lines.join(", ")})` : ""}`,
  );
}

/**
 * Whether two hosts to listen on take in a common address, so that one port cannot be
 * both's: compared as addresses, not as text (`::1` and `0:0:0:0:0:0:0:1` are one, and
 * `::ffff:127.0.0.1` is 127.0.0.1, as the kernel binds it). `::` takes in every address,
 * `0.0.0.0` every IPv4 one; `localhost` is either loopback address, whichever it
 * resolves to; another host name overlaps only itself.
 */
function addressesOverlap(a: string, b: string): boolean {
  const covers = (wide: string, narrow: string) => wide === narrow || wide === "::" || (wide === "0.0.0.0" && parseAddress(narrow)?.version === 4);
  return listenAddresses(a).some((x) => listenAddresses(b).some((y) => covers(x, y) || covers(y, x)));
}

/** The addresses a host to listen on may bind, as canonical text (a host name other than localhost as itself, in lower case). */
function listenAddresses(host: string): string[] {
  const lower = host.toLowerCase();
  if (lower === "localhost") return ["127.0.0.1", "::1"];
  return [parseAddress(host)?.text ?? lower];
}

/** One of the pair alone is refused, naming the file line it came from, as `config check` names the lines of what serve refuses. */
function readTls(certPath: string | null, keyPath: string | null, sources: Readonly<Record<string, SettingSource>>): ServeConfig["tls"] {
  if (certPath === null && keyPath === null) return null;
  if (certPath === null || keyPath === null) {
    const given = certPath !== null ? { source: sources.tlsCert, name: "tls-cert" } : { source: sources.tlsKey, name: "tls-key" };
    const line = given.source?.kind === "file" ? ` (${given.name} at ${given.source.path}:${given.source.line})` : "";
    throw new ConfigError(`--tls-cert and --tls-key go together: give both (or IPLOOKUP_TLS_CERT and IPLOOKUP_TLS_KEY, or tls-cert and tls-key in the configuration file)${line}`);
  }
  const givenAs = `${sourceName("tlsCert", sources.tlsCert ?? { kind: "default" })}/${sourceName("tlsKey", sources.tlsKey ?? { kind: "default" })}`;
  return { certPath, keyPath, givenAs };
}
