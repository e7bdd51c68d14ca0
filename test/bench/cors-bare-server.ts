export {};

/**
 * The floor under the key controls' cost, for the bench: `bun cors-bare-server.ts PORT`.
 * A plain Bun.serve that reads and parses the JSON body and answers a single lookup's
 * body with the headers iplookup's answer has (type, units, data version, request id),
 * built from prebuilt Headers as serve builds them; a request whose key is `cors` also
 * gets the three CORS headers of an answer to an allowed origin. What the two cost apart
 * is what writing those headers costs on this runtime, with no check at all.
 */
const BODY = JSON.stringify({
  ip: "8.8.8.8", version: 4, found: true, network: "8.8.8.0/24", asn: 15169, as_name: "Google LLC", country_code: "US", country: "United States",
  privacy: { hosting: false, tor: null, vpn: null, relay: null, proxy: null, service: null },
});
const EXPOSED = "X-Units-Consumed, X-Units-Remaining, X-Data-Version, X-Request-Id, Retry-After";
const plain = new Headers({ "content-type": "application/json", "x-data-version": "20261128T000000Z-00000000" });
const cors = new Headers({ "content-type": "application/json", "x-data-version": "20261128T000000Z-00000000", vary: "Origin", "access-control-expose-headers": EXPOSED });
let served = 0;
const [port = "0"] = process.argv.slice(2);
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(port),
  async fetch(request) {
    const withCors = request.headers.get("authorization") === "Bearer cors";
    const origin = request.headers.get("origin");
    if (!(await request.json())) return new Response("bad body", { status: 400 });
    const headers = withCors ? cors : plain;
    headers.set("x-units-consumed", "1");
    headers.set("x-request-id", `bench-${(++served).toString(36)}`);
    if (withCors && origin !== null) headers.set("access-control-allow-origin", origin);
    return new Response(BODY, { headers });
  },
});
console.log(JSON.stringify({ port: server.port }));
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
