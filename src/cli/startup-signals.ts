/**
 * Signals that reach `serve` while the program is still loading (CONTRACT §12: SIGTERM
 * or SIGINT during start-up exits 0; SIGHUP before the data is loaded is ignored).
 * Loading the modules takes tens of milliseconds, and a signal without a handler then
 * kills the process; so the entry listens first, with this module alone loaded, and
 * the serve command takes over what arrived. Other commands keep the default handling.
 */
const STARTUP_SIGNALS = ["SIGTERM", "SIGINT", "SIGHUP"] as const;
const received: NodeJS.Signals[] = [];
const record = (signal: NodeJS.Signals) => received.push(signal);

/** Starts holding signals when the command line is `serve …`. */
export function holdSignalsDuringStartup(argv: readonly string[]): void {
  if (argv[2] !== "serve") return;
  for (const signal of STARTUP_SIGNALS) process.on(signal, record);
}

/** Stops holding signals and returns those that arrived meanwhile, in order. */
export function takeStartupSignals(): NodeJS.Signals[] {
  for (const signal of STARTUP_SIGNALS) process.off(signal, record);
  return received.splice(0);
}
