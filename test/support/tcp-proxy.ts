import type { Socket, TCPSocketListener } from "bun";

/**
 * A TCP proxy on 127.0.0.1 in front of a server (PostgreSQL, say) that a test controls,
 * to take the server away from its clients and give it back:
 *
 * - `cut()`: closes every connection through it and refuses new ones (the server
 *   restarted or its host is down: clients see their connections close at once);
 * - `stall()`: keeps the connections open but forwards nothing either way, and accepts
 *   new ones without forwarding them (a network partition: clients see nothing at all);
 * - `restore()`: forwards again; connections stalled meanwhile carry on where they were,
 *   as they would once a partition heals;
 * - `forget()`: the connections open now go silent for good, never closed, while new
 *   ones work (a stateful firewall that lost them: only TCP's retransmission timeout,
 *   many minutes later, would tell the client);
 * - `stallWhenSent(text)`: stall() as soon as a client sends bytes that contain `text`
 *   (a statement's text), before they are forwarded: the database goes silent while
 *   that statement waits for it;
 * - `cutWhenSent(text)`: cut() then, and the bytes are dropped: the connection breaks
 *   under that statement, which the database never sees.
 */
export interface TcpProxy {
  readonly port: number;
  cut(): void;
  stall(): void;
  /** Resolves once it has stalled. */
  stallWhenSent(text: string): Promise<void>;
  /** Resolves once it has cut. */
  cutWhenSent(text: string): Promise<void>;
  restore(): void;
  forget(): void;
  close(): void;
}

interface Pair {
  client: Socket<Pair>;
  upstream?: Socket<Pair>;
  /** Forgotten by forget(): nothing goes through any more. */
  silent?: boolean;
  /** Bytes from the client not yet written to the server, and the other way. */
  toUpstream: Uint8Array[];
  toClient: Uint8Array[];
}

export async function startTcpProxy(target: { hostname: string; port: number }): Promise<TcpProxy> {
  let mode: "open" | "cut" | "stall" = "open";
  const pairs = new Set<Pair>();
  /** The text of stallWhenSent or cutWhenSent, until a client sends it, and what to do then. */
  let trigger: { text: Buffer; act: "stall" | "cut"; fired: () => void } | undefined;
  const arm = (text: string, act: "stall" | "cut") => new Promise<void>((fired) => (trigger = { text: Buffer.from(text), act, fired }));

  const flush = (pair: Pair) => {
    if (mode !== "open" || pair.silent) return;
    if (pair.upstream) for (const chunk of pair.toUpstream.splice(0)) pair.upstream.write(chunk);
    for (const chunk of pair.toClient.splice(0)) pair.client.write(chunk);
  };

  const connectUpstream = async (pair: Pair) => {
    try {
      pair.upstream = await Bun.connect<Pair>({
        hostname: target.hostname,
        port: target.port,
        data: pair,
        socket: {
          data(_, chunk) {
            pair.toClient.push(new Uint8Array(chunk));
            flush(pair);
          },
          close() {
            pair.client.end();
            pairs.delete(pair);
          },
          error() {
            pair.client.end();
          },
        },
      });
      flush(pair);
    } catch {
      pair.client.end();
      pairs.delete(pair);
    }
  };

  const listener: TCPSocketListener<Pair> = Bun.listen<Pair>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        if (mode === "cut") {
          client.end();
          return;
        }
        const pair: Pair = { client, toUpstream: [], toClient: [] };
        client.data = pair;
        pairs.add(pair);
        void connectUpstream(pair);
      },
      data(client, chunk) {
        const pair = client.data;
        if (trigger && Buffer.from(chunk).includes(trigger.text)) {
          const { act, fired } = trigger;
          trigger = undefined;
          fired();
          if (act === "cut") return cut();
          mode = "stall";
        }
        pair.toUpstream.push(new Uint8Array(chunk));
        flush(pair);
      },
      close(client) {
        const pair = client.data;
        if (!pair) return;
        pair.upstream?.end();
        pairs.delete(pair);
      },
      error() {},
    },
  });

  const cut = () => {
    mode = "cut";
    for (const pair of pairs) {
      pair.client.end();
      pair.upstream?.end();
    }
    pairs.clear();
  };

  return {
    port: listener.port,
    cut,
    stall() {
      mode = "stall";
    },
    stallWhenSent: (text) => arm(text, "stall"),
    cutWhenSent: (text) => arm(text, "cut"),
    restore() {
      mode = "open";
      trigger = undefined;
      for (const pair of pairs) flush(pair);
    },
    forget() {
      for (const pair of pairs) pair.silent = true;
    },
    close() {
      cut();
      listener.stop(true);
    },
  };
}
