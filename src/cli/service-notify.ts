import { endianness } from "node:os";
import { FFIType, ptr } from "bun:ffi";
import { openLibc } from "./libc.ts";

/**
 * systemd's readiness protocol (sd_notify(3)), which the unit asks for with
 * `Type=notify`: a service started by systemd finds a datagram socket's path in
 * NOTIFY_SOCKET and sends it `READY=1` once it serves, so `systemctl start` (and every
 * unit ordered after it) waits until the port answers, and a server that fails while
 * starting fails its start; `STOPPING=1` when it begins to stop. Without NOTIFY_SOCKET
 * (any other way of running it) nothing is sent.
 */
export interface ServiceNotifier {
  ready(): void;
  stopping(): void;
}

const AF_UNIX = 1;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const MSG_NOSIGNAL = 0x4000;
/** sun_path's size in struct sockaddr_un on Linux. */
const SUN_PATH_BYTES = 108;

export function serviceNotifier(env: Readonly<Record<string, string | undefined>>, onError: (error: string) => void): ServiceNotifier {
  const socketPath = env.NOTIFY_SOCKET;
  if (!socketPath) return { ready() {}, stopping() {} };
  const send = (message: string) => {
    const failure = sendNotification(socketPath, message);
    if (failure) onError(`telling systemd ${message} failed: ${failure}`);
  };
  return { ready: () => send("READY=1"), stopping: () => send("STOPPING=1") };
}

/**
 * Sends one datagram to a unix socket: a path, or an abstract name written with a
 * leading `@`. Returns null once sent, else what failed.
 */
export function sendNotification(socketPath: string, message: string): string | null {
  const address = socketAddress(socketPath);
  if (!address) return `NOTIFY_SOCKET is not a unix socket's path: ${socketPath}`;
  const libc = openLibc({
    socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    sendto: { args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i64 },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
  });
  if (!libc) return "the C library cannot be opened";
  try {
    const fd = libc.symbols.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return "no socket could be made";
    const bytes = Buffer.from(message);
    const sent = libc.symbols.sendto(fd, ptr(bytes), bytes.length, MSG_NOSIGNAL, ptr(address), address.length);
    libc.symbols.close(fd);
    return Number(sent) === bytes.length ? null : `the datagram to ${socketPath} was not sent`;
  } finally {
    libc.close();
  }
}

/**
 * struct sockaddr_un for a path (its bytes, then a NUL) or an abstract name (`@name`: a
 * NUL, then the name), as long as the address counts, or null for text that is neither.
 */
export function socketAddress(socketPath: string): Buffer | null {
  const abstract = socketPath.startsWith("@");
  if (!abstract && !socketPath.startsWith("/")) return null;
  const name = Buffer.from(abstract ? socketPath.slice(1) : socketPath);
  if (name.length === 0 || name.length + 1 > SUN_PATH_BYTES || name.includes(0)) return null;
  // sa_family_t, in the machine's own byte order; the NUL is the buffer's zero.
  const address = Buffer.alloc(2 + 1 + name.length);
  if (endianness() === "LE") address.writeUInt16LE(AF_UNIX, 0);
  else address.writeUInt16BE(AF_UNIX, 0);
  name.copy(address, abstract ? 3 : 2);
  return address;
}
