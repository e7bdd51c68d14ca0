/** A port claimed for this process (claimPort), held until its own listener binds it. */
export interface PortClaim {
  readonly port: number;
  /** Gives the port up to the listeners bound meanwhile (with SO_REUSEPORT); call once they listen, or on failure. */
  release(): void;
}

/**
 * Claims the port for this process: binds it alone for a moment (no SO_REUSEPORT), which
 * fails if anything listens there, another iplookup included (its sockets have
 * SO_REUSEPORT, which only lets sockets that all set it share a port), then at once
 * binds it again with SO_REUSEPORT and holds it, until `release`. The holder keeps the
 * port this process's own: another iplookup starting meanwhile finds it in use, however
 * long this one takes (opening a PostgreSQL store, loading the keys) before its
 * listeners bind it with SO_REUSEPORT too. Giving it back in between would let that one
 * claim it as well, and the kernel would spread connections over both. Only the two
 * binds' own instant remains open. A connection the holder takes in the moment both it
 * and the listener are bound is closed, as it would be refused before the listener.
 * The port is chosen by the system when `port` is 0.
 */
export function claimPort(host: string, port: number, flags?: ListenFlags): PortClaim {
  let holder: Bun.TCPSocketListener<undefined>;
  try {
    const probe = Bun.listen({ hostname: host, port, socket: { data() {} } });
    const claimed = probe.port;
    probe.stop(true);
    // Bun (1.4) honours reusePort in Bun.listen, though its types name it only for connect.
    const holding: Bun.TCPSocketListenOptions<undefined> & { reusePort: boolean } = { hostname: host, port: claimed, reusePort: true, socket: { open: (socket) => void socket.end(), data() {} } };
    holder = Bun.listen(holding);
  } catch (error) {
    throw bindError(error, host, port, flags);
  }
  let released = false;
  return {
    port: holder.port,
    release() {
      if (released) return;
      released = true;
      holder.stop(true);
    },
  };
}

/**
 * The host to listen on: `::` (every IPv6 and IPv4 address, the default) on a machine
 * without IPv6 falls back to 0.0.0.0, every IPv4 address.
 */
export function listenableHost(host: string): string {
  if (host !== "::") return host;
  try {
    Bun.listen({ hostname: "::", port: 0, socket: { data() {} } }).stop(true);
    return host;
  } catch {
    return "0.0.0.0";
  }
}

/**
 * A failure to listen, as the message an operator sees: a port in use says so plainly.
 * `flags` name the settings to change (the admin listener's are --admin-port, --admin-host).
 */
export function bindError(error: unknown, host: string, port: number, flags: ListenFlags = PUBLIC_FLAGS): Error {
  const code = (error as { code?: string })?.code;
  const message = String((error as Error)?.message ?? error);
  if (code === "EADDRINUSE" || /in use/i.test(message)) {
    return new Error(`cannot listen on ${hostPort(host, port)}: the port is in use by another program (or another iplookup); stop it or choose another ${flags.port}`);
  }
  if (code === "EACCES") return new Error(`cannot listen on ${hostPort(host, port)}: permission denied (ports below 1024 need privileges)`);
  if (code === "EADDRNOTAVAIL") return new Error(`cannot listen on ${hostPort(host, port)}: no such address on this machine (${flags.host})`);
  return error instanceof Error ? error : new Error(message);
}

/** The settings an operator changes to listen elsewhere, as a message names them. */
export interface ListenFlags {
  readonly port: string;
  readonly host: string;
}

const PUBLIC_FLAGS: ListenFlags = { port: "--port", host: "--host" };

function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}
