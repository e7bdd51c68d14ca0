import { FFIType, ptr } from "bun:ffi";
import { openLibc } from "../../src/cli/libc.ts";
import { socketAddress } from "../../src/cli/service-notify.ts";

const AF_UNIX = 1;
const SOCK_DGRAM = 2;
const SOCK_NONBLOCK = 0o4000;
const SOCK_CLOEXEC = 0o2000000;

/** A unix datagram socket bound where a service manager's NOTIFY_SOCKET would be, read without blocking. */
export interface NotifySocket {
  /** Every datagram received so far, in order. */
  messages(): string[];
  /** Polls until a datagram equal to `message` has come, for at most `timeoutMs`. */
  waitFor(message: string, timeoutMs?: number): Promise<boolean>;
  close(): void;
}

export function bindNotifySocket(socketPath: string): NotifySocket {
  const libc = openLibc({
    socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    bind: { args: [FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i32 },
    recv: { args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.i32], returns: FFIType.i64 },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
  });
  if (!libc) throw new Error("the C library cannot be opened");
  const address = socketAddress(socketPath);
  if (!address) throw new Error(`not a socket path: ${socketPath}`);
  const fd = libc.symbols.socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0 || libc.symbols.bind(fd, ptr(address), address.length) !== 0) throw new Error(`cannot bind ${socketPath}`);
  const received: string[] = [];
  const buffer = Buffer.alloc(4096);
  const drain = () => {
    for (;;) {
      const size = Number(libc.symbols.recv(fd, ptr(buffer), buffer.length, 0));
      if (size < 0) return;
      received.push(buffer.toString("utf8", 0, size));
    }
  };
  return {
    messages() {
      drain();
      return [...received];
    },
    async waitFor(message, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        drain();
        if (received.includes(message)) return true;
        await Bun.sleep(10);
      }
      return false;
    },
    close() {
      libc.symbols.close(fd);
      libc.close();
    },
  };
}
