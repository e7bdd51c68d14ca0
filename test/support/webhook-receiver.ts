import { createHmac, timingSafeEqual } from "node:crypto";

/** One request a WebhookReceiver took, with its signature checked independently. */
export interface Received {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
  /** Whether webhook-signature matches HMAC-SHA256(secret bytes, id.timestamp.body), computed here. */
  readonly signatureValid: boolean;
}

/** What the receiver answers a request: a status and a body, after an optional delay. */
export interface Answer {
  readonly status: number;
  readonly body?: string;
  readonly headers?: Record<string, string>;
  readonly delayMs?: number;
}

/**
 * A webhook receiver for the tests: a real HTTP server on loopback (port 0) that records
 * every request, verifies its Standard Webhooks signature with node:crypto (not with
 * iplookup's own code), and answers from a script (then 200 when the script runs out).
 * `stop()` and `start()` take it away and bring it back on the same port.
 */
export class WebhookReceiver {
  readonly received: Received[] = [];
  private script: Answer[] = [];
  private server: ReturnType<typeof Bun.serve> | undefined;
  private port = 0;
  private waiters: (() => void)[] = [];

  constructor(private readonly secret: () => string) {}

  /** The answers to give, in order. */
  answer(...answers: Answer[]): void {
    this.script.push(...answers);
  }

  /** Drops the answers not given yet. */
  clearAnswers(): void {
    this.script = [];
  }

  start(): this {
    this.server = Bun.serve({
      hostname: "127.0.0.1",
      port: this.port,
      fetch: async (request) => {
        const body = await request.text();
        const headers = Object.fromEntries(request.headers.entries());
        this.received.push({ path: new URL(request.url).pathname, headers, body, signatureValid: verify(this.secret(), headers, body) });
        for (const waiter of this.waiters.splice(0)) waiter();
        const answer = this.script.shift() ?? { status: 200, body: "ok" };
        if (answer.delayMs) await Bun.sleep(answer.delayMs);
        return new Response(answer.body ?? "", { status: answer.status, headers: answer.headers });
      },
    });
    this.port = this.server.port!;
    return this;
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}/hook`;
  }

  /** Resolves once `count` requests have arrived (or at once). */
  async waitFor(count: number, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.received.length < count) {
      if (Date.now() > deadline) throw new Error(`the receiver got ${this.received.length} requests, not ${count}, within ${timeoutMs} ms`);
      await Promise.race([new Promise<void>((resolve) => this.waiters.push(resolve)), Bun.sleep(100)]);
    }
  }

  async stop(): Promise<void> {
    await this.server?.stop(true);
    this.server = undefined;
  }
}

/**
 * Standard Webhooks verification, written out here: the secret's base64 after `whsec_`
 * is the key; the content is `${id}.${timestamp}.${body}`; the header holds
 * space-separated `v1,<base64>` signatures, one of which must match.
 */
export function verify(secret: string, headers: Record<string, string>, body: string): boolean {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signatures = headers["webhook-signature"];
  if (!id || !timestamp || !signatures || !secret.startsWith("whsec_")) return false;
  const key = Buffer.from(secret.slice("whsec_".length), "base64");
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.${body}`).digest();
  return signatures.split(" ").some((part) => {
    const [version, value] = part.split(",");
    if (version !== "v1" || !value) return false;
    const given = Buffer.from(value, "base64");
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
