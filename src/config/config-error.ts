/** A bad flag or value: the command line prints the message and exits 2. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
}
