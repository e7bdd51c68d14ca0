import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { ConfigError } from "../config/config-error.ts";

/** A certificate (chain) and its private key, as PEM text. */
export interface TlsPair {
  readonly cert: string;
  readonly key: string;
  /** When the certificate (the first of the chain, the server's own) expires, in ms since the epoch. */
  readonly expiresAtMs: number;
}

/**
 * Reads a certificate and key and checks that they are a pair a listener accepts (PEM
 * that parses, a key that matches the certificate), by opening a listener with them on
 * a free loopback port for a moment, and that the certificate is valid `now`: one that
 * has expired, or is not valid yet, would fail every client that checks it, so it is
 * refused like a broken pair (a botched renewal keeps the certificate served before).
 * Throws an Error saying what is wrong.
 */
export function loadTlsPair(paths: { readonly certPath: string; readonly keyPath: string }, now: Date = new Date()): TlsPair {
  const read = (path: string, what: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch (error) {
      throw new Error(`cannot read the TLS ${what} ${path}: ${(error as Error).message}`);
    }
  };
  const pem = { cert: read(paths.certPath, "certificate"), key: read(paths.keyPath, "key") };
  try {
    Bun.serve({ hostname: "127.0.0.1", port: 0, tls: pem, fetch: () => new Response(null) }).stop(true);
  } catch (error) {
    throw new Error(`the TLS certificate ${paths.certPath} and key ${paths.keyPath} are not a usable pair: ${(error as Error).message}`);
  }
  // The first certificate of the file is the server's own; the rest are its chain.
  const own = new X509Certificate(pem.cert);
  const clock = `this host's clock reads ${iso(now.getTime())}`;
  const [from, to] = [own.validFromDate.getTime(), own.validToDate.getTime()];
  if (now.getTime() >= to) throw new Error(`the TLS certificate ${paths.certPath} expired at ${iso(to)} (${clock})`);
  if (now.getTime() < from) throw new Error(`the TLS certificate ${paths.certPath} is not valid before ${iso(from)} (${clock})`);
  return { ...pem, expiresAtMs: to };
}

function iso(ms: number): string {
  return new Date(ms).toISOString().replace(".000Z", "Z");
}

/**
 * The certificate at start (serve's, and `config check`'s): one that cannot be used is a
 * bad value (exit 2), named as the two settings were given (ServeConfig's tls.givenAs),
 * by their flags when that is not known.
 */
export function loadTlsAtStart(paths: { readonly certPath: string; readonly keyPath: string; readonly givenAs?: string }, now?: Date): TlsPair {
  try {
    return loadTlsPair(paths, now);
  } catch (error) {
    throw new ConfigError(`${paths.givenAs ?? "--tls-cert/--tls-key"}: ${(error as Error).message}`);
  }
}
