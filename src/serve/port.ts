/**
 * Binds the port alone for a moment (no SO_REUSEPORT) and gives it back: the bind fails
 * if anything listens there, another iplookup included (its sockets have SO_REUSEPORT,
 * which only lets sockets that all set it share a port). Returns the port, chosen by
 * the system when `port` is 0. The caller binds it again with SO_REUSEPORT at once, in
 * the same turn, with nothing to wait for between: until then another iplookup may
 * claim it too, and the kernel would spread connections over both (so a server claims
 * it only once its store is open and its keys are loaded, not before).
 */
export function claimPort(host: string, port: number, flags?: ListenFlags): number {
  let probe: Bun.TCPSocketListener<undefined>;
  try {
    probe = Bun.listen({ hostname: host, port, socket: { data() {} } });
  } catch (error) {
    throw bindError(error, host, port, flags);
  }
  const claimed = probe.port;
  probe.stop(true);
  return claimed;
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
