import { Elysia } from "elysia";
import { BatchRequest, LookupRequest } from "../../src/http/schemas.ts";

/**
 * The framework's floor for the HTTP bench: `bun framework-floor-server.ts PORT BODIES.json`.
 * An Elysia app with what any keyed JSON endpoint on this stack has and nothing of
 * iplookup's own work: a global onRequest hook that reads the Authorization header, the
 * same TypeBox body schemas, and a precomputed answer of iplookup's size. Beside the bare
 * Bun.serve it shows how much of the distance to bare the stack itself takes.
 */
const [port = "0", bodiesPath = ""] = process.argv.slice(2);
const bodies = (await Bun.file(bodiesPath).json()) as Record<string, string>;
const answer = (path: string) => () => new Response(bodies[path], { headers: { "content-type": "application/json" } });
const app = new Elysia({ normalize: false, strictPath: true, handler: { standardHostname: false } })
  .onRequest(({ request }) => {
    if (!request.headers.get("authorization")) throw new Error("no key");
  })
  .post("/v1/lookup", answer("/v1/lookup"), { body: LookupRequest })
  .post("/v1/lookup/batch", answer("/v1/lookup/batch"), { body: BatchRequest });
const server = Bun.serve({ hostname: "127.0.0.1", port: Number(port), fetch: app.fetch });
console.log(JSON.stringify({ port: server.port }));
process.on("SIGTERM", () => {
  server.stop(true);
  process.exit(0);
});
