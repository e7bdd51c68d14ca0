import { JOURNAL_PRIORITY } from "./journal.ts";

/** Log levels, least to most severe; `silent` logs nothing. */
export const LOG_LEVELS = ["debug", "info", "warn", "error", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Structured logs: one JSON object a line. Fields never carry a key's secret; the
 * request path logs key ids only.
 */
export interface Logger {
  /** Whether lines of this level are written: check before building a costly line. */
  enabled(level: Exclude<LogLevel, "silent">): boolean;
  log(level: Exclude<LogLevel, "silent">, msg: string, fields?: Record<string, unknown>): void;
  /** A line written at any level but `silent`: the start-up configuration. */
  announce(msg: string, fields?: Record<string, unknown>): void;
  /**
   * A line of `level` that its caller formats from the logger's time text, for the one
   * written on every request (see access-line.ts): it must be one JSON object with the
   * same `time`, `level` and `msg` members a `log` line has.
   */
  logFormatted(level: Exclude<LogLevel, "silent">, format: (time: string) => string): void;
}

/**
 * @param journal lines start with their level's syslog priority (`<6>{…}`, see
 *   journal.ts): for stderr connected to systemd's journal, which strips it
 */
export function createLogger(minimum: LogLevel, write: (line: string) => void, now: () => Date = () => new Date(), journal = false): Logger {
  const threshold = LOG_LEVELS.indexOf(minimum);
  // The access line's path stays one call with no prefix to add when there is no journal.
  const emit = journal ? (level: Exclude<LogLevel, "silent">, text: string) => write(JOURNAL_PRIORITY[level] + text) : (_level: Exclude<LogLevel, "silent">, text: string) => write(text);
  // A busy server logs many lines a millisecond: format each millisecond's time once.
  let lastTime = Number.NaN;
  let lastText = "";
  const timeText = () => {
    const date = now();
    const time = date.getTime();
    if (time !== lastTime) {
      lastTime = time;
      lastText = date.toISOString();
    }
    return lastText;
  };
  const line = (level: Exclude<LogLevel, "silent">, msg: string, fields: Record<string, unknown>) => emit(level, JSON.stringify({ time: timeText(), level, msg, ...fields }));
  return {
    enabled: (level) => LOG_LEVELS.indexOf(level) >= threshold,
    log(level, msg, fields = {}) {
      if (LOG_LEVELS.indexOf(level) >= threshold) line(level, msg, fields);
    },
    announce(msg, fields = {}) {
      if (minimum !== "silent") line("info", msg, fields);
    },
    logFormatted(level, format) {
      if (LOG_LEVELS.indexOf(level) >= threshold) emit(level, format(timeText()));
    },
  };
}
