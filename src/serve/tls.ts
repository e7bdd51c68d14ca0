import { readFileSync } from "node:fs";
import { ConfigError } from "../config/config-error.ts";

/** A certificate (chain) and its private key, as PEM text. */
export interface TlsPair {
  readonly cert: string;
  readonly key: string;
}

/**
 * Reads a certificate and key and checks that they are a pair a listener accepts (PEM
 * that parses, a key that matches the certificate), by opening a listener with them on
 * a free loopback port for a moment. Throws an Error saying what is wrong.
 */
export function loadTlsPair(paths: { readonly certPath: string; readonly keyPath: string }): TlsPair {
  const read = (path: string, what: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch (error) {
      throw new Error(`cannot read the TLS ${what} ${path}: ${(error as Error).message}`);
    }
  };
  const pair = { cert: read(paths.certPath, "certificate"), key: read(paths.keyPath, "key") };
  try {
    Bun.serve({ hostname: "127.0.0.1", port: 0, tls: pair, fetch: () => new Response(null) }).stop(true);
  } catch (error) {
    throw new Error(`the TLS certificate ${paths.certPath} and key ${paths.keyPath} are not a usable pair: ${(error as Error).message}`);
  }
  return pair;
}

/** The certificate at start (serve's, and `config check`'s): one that cannot be used is a bad value (exit 2). */
export function loadTlsAtStart(paths: { readonly certPath: string; readonly keyPath: string }): TlsPair {
  try {
    return loadTlsPair(paths);
  } catch (error) {
    throw new ConfigError(`--tls-cert/--tls-key: ${(error as Error).message}`);
  }
}
