import type { Cidr } from "../address/cidr.ts";
import type { LogLevel } from "../log/logger.ts";
import { ConfigError } from "./config-error.ts";
import { readSetting } from "./settings.ts";

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
  /** HTTPS on both listeners: the certificate and key files (both, or neither). */
  readonly tls: { readonly certPath: string; readonly keyPath: string } | null;
}

export function readServeConfig(
  flags: Readonly<Record<string, unknown>>,
  env: Readonly<Record<string, string | undefined>>,
  defaults: { readonly dataPath?: string } = {},
): ServeConfig {
  return {
    host: readSetting("host", flags, env),
    port: readSetting("port", flags, env),
    statePath: readSetting("state", flags, env),
    dataPath: readSetting("data", flags, env, defaults.dataPath),
    trustProxy: readSetting("trustProxy", flags, env),
    maxBody: readSetting("maxBody", flags, env),
    logLevel: readSetting("logLevel", flags, env),
    workers: readSetting("workers", flags, env),
    adminHost: readSetting("adminHost", flags, env),
    adminPort: readSetting("adminPort", flags, env),
    updateEvery: readSetting("updateEvery", flags, env),
    tls: readTls(flags, env),
  };
}

function readTls(flags: Readonly<Record<string, unknown>>, env: Readonly<Record<string, string | undefined>>): ServeConfig["tls"] {
  const certPath = readSetting("tlsCert", flags, env);
  const keyPath = readSetting("tlsKey", flags, env);
  if (certPath === null && keyPath === null) return null;
  if (certPath === null || keyPath === null) throw new ConfigError("--tls-cert and --tls-key go together: give both (or IPLOOKUP_TLS_CERT and IPLOOKUP_TLS_KEY)");
  return { certPath, keyPath };
}
