import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { takeUpdateLock } from "../../src/importer/update-lock.ts";
import { SqliteStore } from "../../src/store/sqlite-store.ts";
import { gzip, iptoasnTsv } from "../support/download-fixtures.ts";
import { cliAsync as cli, startPublisher } from "../support/publisher.ts";
import { startServerProcess } from "../support/server-process.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

/**
 * data.updated and data.update_failed (CONTRACT §16): `data update` puts them in the
 * state's outbox (a running server delivers them), with no credential in them; a state
 * that does not exist is left uncreated.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-data-events-"));
const publisher = startPublisher();
afterAll(() => {
  publisher.stop();
  rmSync(dir, { recursive: true, force: true });
});

const PASSWORD = "s3cretDownloadPassword";
const AUTH = { IPLOOKUP_DOWNLOAD_AUTH: `127.0.0.1=user:${PASSWORD}` };

/** The bodies of the events waiting for the webhook, oldest first. */
async function queued(state: string): Promise<Record<string, any>[]> {
  const store = SqliteStore.open(state);
  try {
    const due = await store.webhooks.claimDeliveries({ limit: 100, nowMs: Date.now() + 60_000, leaseMs: 1 });
    return due.map((d) => JSON.parse(d.body));
  } finally {
    await store.close();
  }
}

test("a changed source: data.updated with the new version; a failing one: data.update_failed with the reason; no credential in either", async () => {
  const data = join(dir, "data.db");
  const state = join(dir, "state.db");
  const path = `/data/ip2asn-combined.tsv.gz`;
  publisher.publish(path, { body: gzip(iptoasnTsv(13335)), auth: `user:${PASSWORD}` });
  const source = `${publisher.url}${path}`;
  expect((await cli(["data", "import", "--data", data, "--license", "PDDL 1.0", "--attribution", "IP to ASN data by iptoasn.com", source], AUTH)).code).toBe(0);
  expect((await cli(["webhooks", "add", "http://127.0.0.1:9/hook", "--events", "data.updated,data.update_failed", "--state", state])).code).toBe(0);

  // Nothing changed: no event.
  const same = await cli(["data", "update", "--data", data, "--state", state], AUTH);
  expect(same).toMatchObject({ code: 0 });
  expect(await queued(state)).toEqual([]);

  publisher.publish(path, { body: gzip(iptoasnTsv(15169)), auth: `user:${PASSWORD}` });
  const updated = await cli(["data", "update", "--data", data, "--json"], { ...AUTH, IPLOOKUP_STATE: state });
  expect(updated.code).toBe(0);
  const version = JSON.parse(updated.stdout).data_version;
  const [event] = await queued(state);
  expect(event).toMatchObject({ type: "data.updated", data: { data: data, data_version: version, changes: [expect.any(String)] } });

  publisher.publish(path, { body: new Uint8Array(0), status: 500 });
  const failed = await cli(["data", "update", "--data", data, "--state", state], AUTH);
  expect(failed.code).toBe(1);
  const refusal = (await queued(state)).find((body) => body.type === "data.update_failed");
  expect(refusal).toMatchObject({ type: "data.update_failed", data: { data: data, reason: expect.stringContaining("500") } });
  expect(JSON.stringify([event, refusal])).not.toContain(PASSWORD);
});

test("a data update that finds another running records no event: it did nothing, and the one running announces its own outcome", async () => {
  const data = join(dir, "busy.db");
  const state = join(dir, "busy-state.db");
  const path = `/data/busy.tsv.gz`;
  publisher.publish(path, { body: gzip(iptoasnTsv(13335)) });
  expect((await cli(["data", "import", "--data", data, "--license", "PDDL 1.0", "--attribution", "x", `${publisher.url}${path}`])).code).toBe(0);
  expect((await cli(["webhooks", "add", "http://127.0.0.1:9/hook", "--events", "data.updated,data.update_failed", "--state", state])).code).toBe(0);
  publisher.publish(path, { body: gzip(iptoasnTsv(15169)) });
  // Another update of the file (here this process) holds it.
  const lock = takeUpdateLock(data);
  try {
    const busy = await cli(["data", "update", "--data", data, "--state", state]);
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`an update of ${data} is already running`);
    expect(await queued(state)).toEqual([]);
  } finally {
    lock.release();
  }
  // The same update, the file free: its failure is announced as ever.
  publisher.publish(path, { body: new Uint8Array(0), status: 500 });
  expect((await cli(["data", "update", "--data", data, "--state", state])).code).toBe(1);
  expect((await queued(state)).map((body) => body.type)).toEqual(["data.update_failed"]);
});

test("a state that does not exist is not created by data update", async () => {
  const data = join(dir, "data2.db");
  const path = `/data/other.tsv.gz`;
  publisher.publish(path, { body: gzip(iptoasnTsv(13335)) });
  expect((await cli(["data", "import", "--data", data, "--license", "PDDL 1.0", "--attribution", "x", `${publisher.url}${path}`])).code).toBe(0);
  publisher.publish(path, { body: gzip(iptoasnTsv(15169)) });
  const missing = join(dir, "nowhere", "state.db");
  const updated = await cli(["data", "update", "--data", data, "--state", missing]);
  expect(updated.code).toBe(0);
  expect(updated.stderr).not.toContain("warning");
  expect(await Bun.file(missing).exists()).toBe(false);
});

test("serve --update-every with --state as a flag: the update it runs announces data.updated, and the server delivers it", async () => {
  const data = join(dir, "served.db");
  const state = join(dir, "served-state.db");
  const path = `/data/served.tsv.gz`;
  publisher.publish(path, { body: gzip(iptoasnTsv(13335)) });
  expect((await cli(["data", "import", "--data", data, "--license", "PDDL 1.0", "--attribution", "x", `${publisher.url}${path}`])).code).toBe(0);
  let secret = "";
  const receiver = new WebhookReceiver(() => secret).start();
  try {
    const added = await cli(["webhooks", "add", receiver.url, "--events", "data.updated", "--json", "--state", state]);
    secret = (JSON.parse(added.stdout) as { secret: string }).secret;
    publisher.publish(path, { body: gzip(iptoasnTsv(15169)) });
    const server = await startServerProcess(["--data", data, "--state", state, "--update-every", "1s"], { env: { IPLOOKUP_STATE: join(dir, "not-this-one.db") } });
    try {
      await receiver.waitFor(1, 30_000);
      const [got] = receiver.received;
      expect(got!.signatureValid).toBe(true);
      expect(JSON.parse(got!.body)).toMatchObject({ type: "data.updated", data: { data } });
      expect(await Bun.file(join(dir, "not-this-one.db")).exists()).toBe(false);
    } finally {
      await server.stop("SIGKILL");
    }
  } finally {
    await receiver.stop();
  }
}, 60_000);
