/**
 * A data publisher for tests: a Bun.serve on 127.0.0.1, port 0, serving files from a map
 * the test changes as it goes. Each file answers with an ETag (its SHA-256) and
 * Last-Modified, and 304 to a matching If-None-Match or If-Modified-Since; a file may ask
 * for Basic authentication, answer with a status instead, or redirect. Every request is
 * recorded (path and headers) for the test to look at.
 */
export interface PublishedFile {
  body: Uint8Array | string;
  /** When the file was last modified (default: when it was published). */
  modified?: Date;
  /** `user:password` the request must carry as Basic authentication. */
  auth?: string;
  /** Answer this status (and an empty body) instead. */
  status?: number;
  /** Redirect (302) to this URL instead. */
  redirect?: string;
  /** Content-Disposition's file name. */
  filename?: string;
  /** Send the body one byte every this many ms (a publisher that trickles). */
  trickleMs?: number;
  /** A Content-Encoding header sent with the body as given, whatever the request accepts. */
  encoding?: string;
}

export interface RecordedRequest {
  readonly path: string;
  readonly headers: Record<string, string>;
}

export interface Publisher {
  readonly url: string;
  readonly files: Map<string, PublishedFile>;
  readonly requests: RecordedRequest[];
  /** Publishes (or replaces) a file at `path` ("/x.mmdb.gz"). */
  publish(path: string, file: PublishedFile): void;
  stop(): void;
}

export function startPublisher(): Publisher {
  const files = new Map<string, PublishedFile>();
  const requests: RecordedRequest[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      const url = new URL(request.url);
      const key = `${url.pathname}${url.search}`;
      requests.push({ path: key, headers: Object.fromEntries(request.headers) });
      const file = files.get(key) ?? files.get(url.pathname);
      if (!file) return new Response("not found", { status: 404 });
      if (file.auth !== undefined && request.headers.get("authorization") !== `Basic ${btoa(file.auth)}`) {
        return new Response("unauthorized", { status: 401, headers: { "www-authenticate": 'Basic realm="test"' } });
      }
      if (file.redirect !== undefined) return new Response(null, { status: 302, headers: { location: file.redirect } });
      if (file.status !== undefined) return new Response(`status ${file.status}`, { status: file.status });
      const body = typeof file.body === "string" ? new TextEncoder().encode(file.body) : file.body;
      const etag = `"${new Bun.CryptoHasher("sha256").update(body).digest("hex").slice(0, 16)}"`;
      const modified = (file.modified ?? new Date(0)).toUTCString();
      const headers: Record<string, string> = { etag, "last-modified": modified };
      if (file.filename) headers["content-disposition"] = `attachment; filename=${file.filename}`;
      if (file.encoding) headers["content-encoding"] = file.encoding;
      const ifNoneMatch = request.headers.get("if-none-match");
      const ifModifiedSince = request.headers.get("if-modified-since");
      if (ifNoneMatch !== null ? ifNoneMatch === etag : ifModifiedSince !== null && Date.parse(ifModifiedSince) >= Date.parse(modified)) {
        return new Response(null, { status: 304, headers });
      }
      if (file.trickleMs !== undefined) return new Response(trickle(body, file.trickleMs), { headers: { ...headers, "content-length": String(body.byteLength) } });
      return new Response(body, { headers });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    files,
    requests,
    publish(path, file) {
      files.set(path, { modified: new Date(Math.floor(Date.now() / 1000) * 1000), ...file });
    },
    stop() {
      server.stop(true);
    },
  };
}

/** `body`, a byte every `everyMs` ms. */
function trickle(body: Uint8Array, everyMs: number): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    async pull(controller) {
      await Bun.sleep(everyMs);
      if (at >= body.byteLength) return controller.close();
      controller.enqueue(body.slice(at, at + 1));
      at++;
    },
  });
}

/**
 * A server that promises `declared` bytes and sends `sent` of them, then closes the
 * connection: a download cut short. Written on a raw socket, since an HTTP server
 * will not send a body shorter than its own Content-Length.
 */
export function startTruncatingServer(declared: number, sent: number): { url: string; stop(): void } {
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      data(socket) {
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: ${declared}\r\nETag: "cut"\r\nConnection: close\r\n\r\n`);
        socket.write(new Uint8Array(sent).fill(0x41));
        socket.flush();
        setTimeout(() => socket.end(), 20);
      },
    },
  });
  return { url: `http://127.0.0.1:${listener.port}`, stop: () => listener.stop(true) };
}

/**
 * Runs the CLI as a separate process without blocking this one (cli() in
 * server-process.ts waits synchronously, so a publisher in this process could not
 * answer it): `bun src/main.ts ARGS`.
 */
export async function cliAsync(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = Bun.spawn([process.execPath, MAIN, ...args], { env: { ...process.env, ...env }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { code, stdout, stderr };
}

const MAIN = new URL("../../src/main.ts", import.meta.url).pathname;
