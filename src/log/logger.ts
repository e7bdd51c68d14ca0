/** Log levels, least to most severe; `silent` logs nothing. */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Structured logs: one JSON object a line. Fields never carry a key's secret; the
 * request path logs key ids only.
 */
export interface Logger {
  log(level: Exclude<LogLevel, "silent">, msg: string, fields?: Record<string, unknown>): void;
}

export function createLogger(minimum: LogLevel, write: (line: string) => void, now: () => Date = () => new Date()): Logger {
  const threshold = LOG_LEVELS.indexOf(minimum);
  return {
    log(level, msg, fields = {}) {
      if (LOG_LEVELS.indexOf(level) < threshold) return;
      write(JSON.stringify({ time: now().toISOString(), level, msg, ...fields }));
    },
  };
}
