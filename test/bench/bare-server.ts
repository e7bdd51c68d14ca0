export {};

/**
 * The bare reference for the HTTP bench: `bun bare-server.ts PORT BODIES.json`. A plain
 * Bun.serve that reads and parses the JSON body, as iplookup must, and answers a
 * precomputed body of the same size as iplookup's answer for that path.
 */
const [port = "0", bodiesPath = ""] = process.argv.slice(2);
const bodies = (await Bun.file(bodiesPath).json()) as Record<string, string>;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(port),
  async fetch(request) {
    const parsed = (await request.json()) as unknown;
    const path = new URL(request.url).pathname;
    const body = bodies[path];
    if (!parsed || body === undefined) return new Response("not found", { status: 404 });
    return new Response(body, { headers: { "content-type": "application/json" } });
  },
});
console.log(JSON.stringify({ port: server.port }));
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
