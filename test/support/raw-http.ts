/** An answer read off a raw socket. */
export interface RawAnswer {
  /** 0 when the server closed without an answer. */
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/**
 * Sends `request` byte for byte to `port` on loopback, as no HTTP client would (no Host
 * header, a request-target of any form, HTTP/1.0), and reads one answer: until the
 * server closes or the declared body has arrived. Gives up after `timeoutMs`.
 */
export async function rawRequest(port: number, request: string, { tls = false, timeoutMs = 5_000 } = {}): Promise<RawAnswer> {
  const text = await new Promise<string>((resolve, reject) => {
    let received = "";
    let done = false;
    const finish = (socket?: { end(): void }) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket?.end();
      resolve(received);
    };
    const timer = setTimeout(() => finish(), timeoutMs);
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      tls: tls ? { rejectUnauthorized: false } : undefined,
      socket: {
        open(socket) {
          socket.write(request);
        },
        data(socket, data) {
          received += data.toString("latin1");
          if (complete(received)) finish(socket);
        },
        close() {
          finish();
        },
        error() {
          finish();
        },
      },
    }).catch(reject);
  });
  const split = text.indexOf("\r\n\r\n");
  if (split < 0) return { status: 0, headers: {}, body: text };
  const [statusLine = "", ...lines] = text.slice(0, split).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(":");
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(" ")[1] ?? 0), headers, body: text.slice(split + 4) };
}

function complete(text: string): boolean {
  const split = text.indexOf("\r\n\r\n");
  if (split < 0) return false;
  const length = /\r\ncontent-length:\s*(\d+)/i.exec(text.slice(0, split + 2));
  return length !== null && text.length - split - 4 >= Number(length[1]);
}
