export {};

/**
 * The bare reference for the AS rows of the HTTP bench: `bun asn-bare-server.ts PORT
 * BODIES.json`. A plain Bun.serve that answers a GET of a path with a precomputed body
 * of the size iplookup answers it with, and nothing else.
 */
const [port = "0", bodiesPath = ""] = process.argv.slice(2);
const bodies = (await Bun.file(bodiesPath).json()) as Record<string, string>;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: Number(port),
  fetch(request) {
    const body = bodies[new URL(request.url).pathname];
    if (body === undefined) return new Response("not found", { status: 404 });
    return new Response(body, { headers: { "content-type": "application/json" } });
  },
});
console.log(JSON.stringify({ port: server.port }));
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
