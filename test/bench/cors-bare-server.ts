import { AnswerHeaders } from "../../src/http/answer-headers.ts";

/**
 * The floor under the key controls' cost, for the bench: `bun cors-bare-server.ts PORT`.
 * A plain Bun.serve that reads and parses the JSON body and answers a single lookup's
 * body with the headers iplookup's answer has, built by serve's own AnswerHeaders; a
 * request whose key is `cors` answers as to an allowed origin (its Origin), with the
 * three CORS headers. What the two cost apart is what writing those headers costs on
 * this runtime, with no check at all.
 */
const BODY = JSON.stringify({
  ip: "8.8.8.8", version: 4, found: true, network: "8.8.8.0/24", asn: 15169, as_name: "Google LLC", country_code: "US", country: "United States",
  privacy: { hosting: false, tor: null, vpn: null, relay: null, proxy: null, service: null },
});
const headers = new AnswerHeaders();
let served = 0;
const [port = "0"] = process.argv.slice(2);
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(port),
  async fetch(request) {
    const cors = request.headers.get("authorization") === "Bearer cors" ? (request.headers.get("origin") ?? null) : undefined;
    if (!(await request.json())) return new Response("bad body", { status: 400 });
    const requestId = `bench-${(++served).toString(36)}`;
    return new Response(BODY, { headers: headers.for({ dataVersion: "20261128T000000Z-00000000", consumed: 1, remaining: null, cors, requestId }) });
  },
});
console.log(JSON.stringify({ port: server.port }));
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
