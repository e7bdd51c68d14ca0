import type { Socket, TCPSocketListener } from "bun";

/**
 * A webhook receiver on loopback that never finishes an answer: it takes each request
 * and writes `reply` (raw bytes: a status line and headers, perhaps part of a body), or
 * nothing at all, and keeps the connection open until the sender closes it or `stop()`.
 */
export class StuckReceiver {
  /** Connections accepted, and those open now. */
  accepted = 0;
  readonly open = new Set<Socket<{ replied: boolean }>>();
  private readonly listener: TCPSocketListener<{ replied: boolean }>;

  constructor(reply?: string) {
    this.listener = Bun.listen<{ replied: boolean }>({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open: (socket) => {
          socket.data = { replied: false };
          this.accepted++;
          this.open.add(socket);
        },
        data: (socket) => {
          if (reply === undefined || socket.data.replied) return;
          socket.data.replied = true;
          socket.write(reply);
        },
        close: (socket) => void this.open.delete(socket),
        error: (socket) => void this.open.delete(socket),
      },
    });
  }

  get url(): string {
    return `http://127.0.0.1:${this.listener.port}/hook`;
  }

  stop(): void {
    for (const socket of this.open) socket.terminate();
    this.listener.stop(true);
  }
}
