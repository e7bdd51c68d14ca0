import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCliInProcess } from "../support/in-process-cli.ts";

/**
 * What `webhooks add` refuses (exit 2, as all bad input): a URL that is no URL, shown
 * without its user info however it is broken; a URL whose text names no host; a URL
 * another webhook has already, naming that webhook.
 */
const dir = mkdtempSync(join(tmpdir(), "iplookup-webhook-refusals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let states = 0;
const freshState = () => join(dir, `state-${++states}.db`);
const run = (...args: string[]) => runCliInProcess(join(dir, "no-data.db"), args);
const listed = async (state: string) => JSON.parse((await run("webhooks", "list", "--json", "--state", state)).stdout) as { id: string; url: string }[];

test("a URL that is no URL exits 2, and its user info is not printed", async () => {
  const state = freshState();
  for (const url of ["https://user:hunter2@[::1", "http:user:hunter2@[::1", "//user:hunter2@[::1", "ftp://user:hunter2@["]) {
    const refused = await run("webhooks", "add", url, "--events", "key.created", "--state", state);
    expect({ url, code: refused.code, stdout: refused.stdout }).toEqual({ url, code: 2, stdout: "" });
    expect({ url, stderr: refused.stderr }).toEqual({ url, stderr: expect.stringContaining("is not a URL") });
    expect({ url, stderr: refused.stderr }).not.toEqual({ url, stderr: expect.stringMatching(/hunter2|user/) });
  }
});

test("a URL whose text names no host exits 2", async () => {
  const state = freshState();
  for (const url of ["http:///x", "http:x"]) {
    const refused = await run("webhooks", "add", url, "--events", "key.created", "--state", state);
    expect({ url, code: refused.code, stderr: refused.stderr }).toEqual({ url, code: 2, stderr: `iplookup: the URL names no host: write it as http://HOST/…\n` });
  }
});

test("a URL another webhook has already exits 2, naming it; the URL names one webhook, as the guide's jq recipe needs", async () => {
  const state = freshState();
  const added = await run("webhooks", "add", "https://hooks.example.com/iplookup", "--events", "usage.threshold,key.revoked", "--json", "--state", state);
  expect(added.code).toBe(0);
  const { id } = JSON.parse(added.stdout) as { id: string };
  const again = await run("webhooks", "add", "https://hooks.example.com/iplookup", "--events", "usage.threshold,key.revoked", "--state", state);
  expect(again).toEqual({ code: 2, stdout: "", stderr: `iplookup: the webhook ${id} has this URL already; remove it first to register the URL again (with other events or a new secret)\n` });
  expect((await listed(state)).filter((webhook) => webhook.url === "https://hooks.example.com/iplookup").map((webhook) => webhook.id)).toEqual([id]);
});
