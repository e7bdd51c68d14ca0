/**
 * A stop shortly after a certificate reload (CONTRACT §8: with nothing in flight, a stop
 * is done within half a second): the listener the new certificate replaced, still telling
 * its clients to reconnect, stops with the current one rather than at the end of its second.
 */
import { afterAll, expect, test } from "bun:test";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { selfSignedCertificate } from "../support/certificate.ts";
import { startSocketServer } from "../support/in-process-server.ts";
import { listening } from "../support/ports.ts";

const dir = mkdtempSync(join(tmpdir(), "iplookup-tls-relisten-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("a stop just after a certificate reload stops the replaced listener at once", async () => {
  const first = selfSignedCertificate(dir, "relisten-first");
  const second = selfSignedCertificate(dir, "relisten-second");
  const certPath = join(dir, "live.crt");
  const keyPath = join(dir, "live.key");
  copyFileSync(first.cert, certPath);
  copyFileSync(first.key, keyPath);
  const server = await startSocketServer({ workers: "1", "tls-cert": certPath, "tls-key": keyPath });
  let stopping: Promise<void> | undefined;
  try {
    expect(await listening(server.port)).toBe(true);
    copyFileSync(second.cert, certPath);
    copyFileSync(second.key, keyPath);
    server.reload();
    expect(server.logs.join("\n")).not.toContain("tls reload failed");
    stopping = server.close();
    // Both listeners are closed by now; the replaced one would otherwise take
    // connections for the rest of its second, and the stop would wait for it.
    expect(await listening(server.port)).toBe(false);
  } finally {
    await (stopping ?? server.close());
  }
});
