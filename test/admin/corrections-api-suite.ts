import { afterAll, beforeAll, expect, test } from "bun:test";
import { cli, startServerProcess, type ServerProcess } from "../support/server-process.ts";

/**
 * Local corrections through the admin API (CONTRACT §15), end to end: a real `serve
 * --workers 2` with its admin listener, the corrections made over its socket and seen
 * in lookups on the public port, on both worker threads, within a second; bad input
 * refused whole. Run once a state kind (corrections-api.test.ts).
 */
export function correctionsApiSuite(fresh: () => Promise<string>): void {
  let server: ServerProcess;
  let admin: string;
  let token: string;
  let key: string;
  let state: string;

  const adminRequest = (method: string, path: string, body?: unknown, contentType = "application/json") =>
    fetch(`${admin}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": contentType }) },
      body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
    });
  const list = async () => ((await (await adminRequest("GET", "/admin/v1/corrections")).json()) as { corrections: Record<string, unknown>[] }).corrections;
  /** A lookup on a connection of its own, so that both worker threads answer some. */
  const lookup = async (ip: string) => {
    const response = await fetch(`${server.url}/v1/lookup`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", connection: "close" },
      body: JSON.stringify({ ip }),
    });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };
  /**
   * Until eight lookups in a row (over both threads) all pass `check`; at most a second
   * after the change. Then waits out the rest of that second: the eight may all have
   * landed on one thread while the other was still within its poll, and what the test
   * asserts next must hold on both.
   */
  const everywhereWithinASecond = async (ip: string, check: (result: Record<string, unknown>) => boolean) => {
    const start = performance.now();
    for (;;) {
      const results = await Promise.all(Array.from({ length: 8 }, () => lookup(ip)));
      if (results.every(check)) {
        await Bun.sleep(Math.max(0, 1000 - (performance.now() - start)));
        return;
      }
      if (performance.now() - start > 1000) throw new Error(`not on every thread within a second: ${JSON.stringify(results)}`);
      await Bun.sleep(25);
    }
  };

  beforeAll(async () => {
    state = await fresh();
    const created = cli(["admin", "create", "--name", "ops", "--json"], { IPLOOKUP_STATE: state });
    expect(created.code).toBe(0);
    token = (JSON.parse(created.stdout) as { token: string }).token;
    key = (JSON.parse(cli(["keys", "create", "--name", "k", "--plan", "unlimited", "--json"], { IPLOOKUP_STATE: state }).stdout) as { key: string }).key;
    server = await startServerProcess(["--state", state, "--workers", "2", "--admin-port", "0"]);
    admin = /"admin":"([^"]+)"/.exec(server.stderr())![1]!.replace(/\/$/, "");
  });
  afterAll(async () => {
    await server?.stop("SIGKILL");
  });

  test("PUT sets a correction (/ as _ or %2F), every thread answers it within a second; GET lists it; DELETE removes it", async () => {
    const before = await lookup("1.1.1.1");
    expect(before).toMatchObject({ network: "1.1.1.0/24", country_code: "AU" });

    const put = await adminRequest("PUT", "/admin/v1/corrections/1.1.1.0_25", { country_code: "DE", asn: 64500, note: "moved" });
    expect(put.status).toBe(200);
    expect(put.headers.get("content-type")).toBe("application/json");
    const body = (await put.json()) as Record<string, unknown>;
    expect(body).toEqual({ cidr: "1.1.1.0/25", country_code: "DE", asn: 64500, note: "moved", created_at: expect.any(String), updated_at: body.created_at });
    await everywhereWithinASecond("1.1.1.1", (r) => r.country_code === "DE" && r.country === "Germany" && r.asn === 64500 && r.network === "1.1.1.0/25");
    // Just outside the block: the data's answer, its network cut at the block's edge.
    expect(await lookup("1.1.1.128")).toMatchObject({ country_code: "AU", asn: 13335, network: "1.1.1.128/25" });

    const nested = await adminRequest("PUT", "/admin/v1/corrections/1.1.1.0%2F26", { privacy: { hosting: true, service: "Example Cloud" }, city: "Berlin" });
    expect(nested.status).toBe(200);
    await everywhereWithinASecond("1.1.1.1", (r) => r.city === "Berlin" && r.country_code === "DE" && r.network === "1.1.1.0/26" && (r.privacy as Record<string, unknown>)?.hosting === true);

    const v6 = await adminRequest("PUT", "/admin/v1/corrections/2606:4700:4700::1100_120", { as_name: "Corrected v6" });
    expect(v6.status).toBe(200);
    expect((await list()).map((c) => c.cidr)).toEqual(["1.1.1.0/25", "1.1.1.0/26", "2606:4700:4700::1100/120"]);
    await everywhereWithinASecond("2606:4700:4700::1111", (r) => r.as_name === "Corrected v6" && r.network === "2606:4700:4700::1100/120");

    // Across a data reload (SIGHUP): the corrections stay laid over the new index.
    server.process.kill("SIGHUP");
    const waited = performance.now();
    while (!server.stderr().includes("data reloaded") && performance.now() - waited < 10_000) await Bun.sleep(25);
    expect(server.stderr()).toContain("data reloaded");
    await everywhereWithinASecond("1.1.1.1", (r) => r.city === "Berlin" && r.asn === 64500);

    const removed = await adminRequest("DELETE", "/admin/v1/corrections/1.1.1.0_26");
    expect(removed.status).toBe(200);
    expect(((await removed.json()) as { cidr: string }).cidr).toBe("1.1.1.0/26");
    await everywhereWithinASecond("1.1.1.1", (r) => r.city === undefined && JSON.stringify(r.privacy) === JSON.stringify(before.privacy) && r.country_code === "DE" && r.network === "1.1.1.0/25");
    const again = await adminRequest("DELETE", "/admin/v1/corrections/1.1.1.0_26");
    expect(again.status).toBe(404);
    expect(await again.json()).toMatchObject({ code: "not_found", status: 404 });

    for (const cidr of ["1.1.1.0_25", "2606:4700:4700::1100_120"]) expect((await adminRequest("DELETE", `/admin/v1/corrections/${cidr}`)).status).toBe(200);
    await everywhereWithinASecond("1.1.1.1", (r) => JSON.stringify(r) === JSON.stringify(before));
    expect(await list()).toEqual([]);
  });

  test("AS answers follow a correction naming asn (CONTRACT §14): on every thread within a second, and in the console's AS lookups", async () => {
    const moved = 4242420;
    /** An AS answer from the public port, on a connection of its own. */
    const asAnswer = async (path: string) => {
      const response = await fetch(`${server.url}/v1/asn${path}`, { headers: { authorization: `Bearer ${key}`, connection: "close" } });
      expect(response.status).toBe(200);
      return (await response.json()) as { asn: number; found: boolean; num_ips: number; prefixes: string[]; results?: { asn: number }[] };
    };
    const cloudflare = await asAnswer("/13335");
    expect(cloudflare.prefixes).toContain("1.1.1.0/24");
    expect((await asAnswer(`/${moved}`)).found).toBe(false);
    expect((await adminRequest("PUT", "/admin/v1/corrections/1.1.1.0_24", { asn: moved })).status).toBe(200);
    const start = performance.now();
    for (;;) {
      const answers = await Promise.all(Array.from({ length: 8 }, () => asAnswer(`/${moved}`)));
      if (answers.every((answer) => answer.found && answer.num_ips === 256 && answer.prefixes.join() === "1.1.1.0/24")) break;
      if (performance.now() - start > 1000) throw new Error(`not on every thread within a second: ${JSON.stringify(answers)}`);
      await Bun.sleep(25);
    }
    await Bun.sleep(Math.max(0, 1000 - (performance.now() - start)));
    for (let i = 0; i < 4; i++) {
      const now = await asAnswer("/13335");
      expect(now.prefixes).not.toContain("1.1.1.0/24");
      expect(now.num_ips).toBe(cloudflare.num_ips - 256);
      expect((await asAnswer(`?q=${moved}`)).results?.map((entry) => entry.asn)).toEqual([moved]);
    }
    // The console's AS lookup (the admin listener's own thread) answers the same.
    const consoleAnswer = await adminRequest("GET", `/admin/v1/asn/${moved}`);
    expect(consoleAnswer.status).toBe(200);
    expect(((await consoleAnswer.json()) as { prefixes: string[] }).prefixes).toEqual(["1.1.1.0/24"]);

    expect((await adminRequest("DELETE", "/admin/v1/corrections/1.1.1.0_24")).status).toBe(200);
    const removed = performance.now();
    while ((await Promise.all(Array.from({ length: 8 }, () => asAnswer(`/${moved}`)))).some((answer) => answer.found)) {
      if (performance.now() - removed > 1000) throw new Error("the removed correction still answers after a second");
      await Bun.sleep(25);
    }
    await Bun.sleep(Math.max(0, 1000 - (performance.now() - removed)));
    expect(await asAnswer("/13335")).toEqual(cloudflare);
  });

  test("every change is in the audit log, with the admin token's id, what changed, and no secret", async () => {
    expect((await adminRequest("PUT", "/admin/v1/corrections/198.51.100.0_24", { country_code: "FR", note: "audit" })).status).toBe(200);
    expect((await adminRequest("PUT", "/admin/v1/corrections/198.51.100.0_24", { country_code: "BE", note: "audit" })).status).toBe(200);
    expect((await adminRequest("DELETE", "/admin/v1/corrections/198.51.100.0_24")).status).toBe(200);
    const audit = (await (await adminRequest("GET", "/admin/v1/audit")).json()) as { entries: { actor: string; action: string; target: string; changes: Record<string, unknown> }[] };
    const mine = audit.entries.filter((entry) => entry.target === "correction:198.51.100.0/24");
    expect(mine.map((entry) => entry.action)).toEqual(["correction.removed", "correction.updated", "correction.created"]);
    expect(mine.every((entry) => /^adm_[a-z2-7]{16}$/.test(entry.actor))).toBe(true);
    expect(mine[1]!.changes).toEqual({ country_code: { from: "FR", to: "BE" } });
    expect(JSON.stringify(audit)).not.toContain(token);
    // The command line's changes name the actor `cli`.
    expect(cli(["corrections", "set", "198.51.100.0/25", "--country", "NL"], { IPLOOKUP_STATE: state }).code).toBe(0);
    const after = (await (await adminRequest("GET", "/admin/v1/audit")).json()) as typeof audit;
    expect(after.entries[0]).toMatchObject({ actor: "cli", action: "correction.created", target: "correction:198.51.100.0/25", changes: { country_code: { from: null, to: "NL" } } });
    expect(cli(["corrections", "remove", "198.51.100.0/25"], { IPLOOKUP_STATE: state }).code).toBe(0);
  });

  test("bad input answers 400 in the contract's shape and writes nothing", async () => {
    expect((await adminRequest("PUT", "/admin/v1/corrections/192.0.2.0_24", { asn: 1 })).status).toBe(200);
    const held = await list();
    const refused: [string, unknown, string][] = [
      ["not-a-cidr", { asn: 1 }, "invalid_request"],
      ["192.0.2.1_24", { asn: 1 }, "invalid_request"], // host bits set
      ["192.0.2.0_33", { asn: 1 }, "invalid_request"],
      ["192.0.2.0%2", { asn: 1 }, "invalid_request"], // bad percent-encoding
      ["192.0.2.0_24", { country_code: "XX" }, "invalid_request"], // no such country
      ["192.0.2.0_24", { country_code: "de" }, "invalid_request"],
      ["192.0.2.0_24", { asn: 4_294_967_296 }, "invalid_request"],
      ["192.0.2.0_24", { asn: -1 }, "invalid_request"],
      ["192.0.2.0_24", { asn: 1.5 }, "invalid_request"],
      ["192.0.2.0_24", { as_name: "nul\u0000inside" }, "invalid_request"],
      ["192.0.2.0_24", { city: "tab\there" }, "invalid_request"],
      ["192.0.2.0_24", { asn: 2, note: "line\nbreak" }, "invalid_request"],
      ["192.0.2.0_24", {}, "invalid_request"], // names nothing
      ["192.0.2.0_24", { note: "only a note" }, "invalid_request"],
      ["192.0.2.0_24", { colour: "red" }, "invalid_request"],
      ["192.0.2.0_24", { privacy: { tor: "yes" } }, "invalid_request"],
      ["192.0.2.0_24", { privacy: {} }, "invalid_request"],
      ["192.0.2.0_24", { privacy: { anonymous: true } }, "invalid_request"],
      ["192.0.2.0_24", "[1,2", "invalid_json"],
    ];
    for (const [cidr, body, code] of refused) {
      const response = await adminRequest("PUT", `/admin/v1/corrections/${cidr}`, body);
      const problem = (await response.json()) as Record<string, unknown>;
      expect({ cidr, body, status: response.status, code: problem.code }).toEqual({ cidr, body, status: 400, code });
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      expect(problem).toMatchObject({ type: "about:blank", title: "Bad Request", status: 400, detail: expect.any(String) });
    }
    const unsupported = await adminRequest("PUT", "/admin/v1/corrections/192.0.2.0_24", { asn: 3 }, "text/plain");
    expect(unsupported.status).toBe(415);
    expect((await adminRequest("DELETE", "/admin/v1/corrections/192.0.2.1_24")).status).toBe(400);
    expect((await fetch(`${admin}/admin/v1/corrections/192.0.2.0_24`, { method: "PUT", body: "{}" })).status).toBe(401);
    expect(await list()).toEqual(held);
    expect((await adminRequest("DELETE", "/admin/v1/corrections/192.0.2.0_24")).status).toBe(200);
  });

  test("the block in the path is decoded once: %2F is a slash, %252F is no block (it would be two decodings)", async () => {
    const before = await list();
    for (const [method, body] of [["PUT", { asn: 1 }], ["DELETE", undefined]] as const) {
      for (const cidr of ["192.0.2.0%252F24", "192.0.2.0%25252F24", "fe80::%25eth0_64"]) {
        const response = await adminRequest(method, `/admin/v1/corrections/${cidr}`, body);
        expect({ method, cidr, status: response.status, code: ((await response.json()) as { code: string }).code }).toEqual({ method, cidr, status: 400, code: "invalid_request" });
      }
    }
    expect(await list()).toEqual(before);
    expect((await adminRequest("PUT", "/admin/v1/corrections/192.0.2.0%2F24", { asn: 1 })).status).toBe(200);
    expect((await adminRequest("DELETE", "/admin/v1/corrections/192.0.2.0%2f24")).status).toBe(200);
    expect(await list()).toEqual(before);
  });
}
