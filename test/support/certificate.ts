import { expect } from "bun:test";
import { join } from "node:path";

/**
 * A self-signed certificate whose subject names `label`, made by openssl into `dir` as
 * `label.crt` and `label.key` (PEM), for `altNames` (127.0.0.1 by default). Returns the
 * two files' paths.
 */
export function selfSignedCertificate(dir: string, label: string, altNames = "IP:127.0.0.1"): { cert: string; key: string } {
  const cert = join(dir, `${label}.crt`);
  const key = join(dir, `${label}.key`);
  const made = Bun.spawnSync(
    ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert, "-days", "2", "-subj", `/CN=${label}`, "-addext", `subjectAltName=${altNames}`],
    { stdout: "pipe", stderr: "pipe" },
  );
  expect(made.exitCode).toBe(0);
  return { cert, key };
}
