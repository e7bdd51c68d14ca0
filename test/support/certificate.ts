import { expect } from "bun:test";
import { writeFileSync } from "node:fs";
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

/**
 * A self-signed certificate for localhost and 127.0.0.1 valid only from `notBefore` to
 * `notAfter` (openssl's YYYYMMDDHHMMSSZ), dates `req -x509` cannot set: signed by
 * `openssl ca -selfsign`, with a CA database of its own in `dir`. Returns the paths.
 */
export function datedCertificate(dir: string, label: string, notBefore: string, notAfter: string): { cert: string; key: string } {
  const cert = join(dir, `${label}.crt`);
  const key = join(dir, `${label}.key`);
  const csr = join(dir, `${label}.csr`);
  const config = join(dir, `${label}.ca.conf`);
  const database = join(dir, `${label}.index.txt`);
  writeFileSync(database, "");
  writeFileSync(join(dir, `${label}.serial`), "01\n");
  writeFileSync(
    config,
    ["[ca]", "default_ca = local", "[local]", `database = ${database}`, `new_certs_dir = ${dir}`, `serial = ${join(dir, `${label}.serial`)}`, "default_md = sha256", "policy = any", "copy_extensions = copy", "[any]", "commonName = supplied", ""].join("\n"),
  );
  const run = (args: string[]) => {
    const made = Bun.spawnSync(["openssl", ...args], { stdout: "pipe", stderr: "pipe" });
    expect(made.exitCode, made.stderr.toString()).toBe(0);
  };
  run(["req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", `/CN=${label}`, "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"]);
  run(["ca", "-batch", "-config", config, "-selfsign", "-keyfile", key, "-in", csr, "-out", cert, "-startdate", notBefore, "-enddate", notAfter, "-notext"]);
  return { cert, key };
}
