/**
 * What an import tells the person running it: a line per finished step, and, on a
 * terminal, a percentage for the step under way, redrawn in place.
 */
export interface Progress {
  line(message: string): void;
  /** The step `label` has done `done` of `total` (0: not known, `label` alone is shown). */
  update(label: string, done: number, total: number): void;
}

/** Writes progress to a stream; percentages only when it is a terminal. */
export function streamProgress(stream: { write(text: string): unknown; isTTY?: boolean }): Progress {
  let drawn = false;
  let lastPercent = -1;
  let lastLabel = "";
  const clear = () => {
    if (drawn) stream.write("\r\x1b[K");
    drawn = false;
  };
  return {
    line(message) {
      clear();
      stream.write(`${message}\n`);
    },
    update(label, done, total) {
      if (!stream.isTTY) return;
      const percent = total > 0 ? Math.min(100, Math.floor((done / total) * 100)) : -1;
      if (percent === lastPercent && label === lastLabel) return;
      lastPercent = percent;
      lastLabel = label;
      stream.write(`\r\x1b[K${label}${percent >= 0 ? ` ${percent}%` : ""}`);
      drawn = true;
    },
  };
}

/** Progress as plain lines into a function (a log), no percentages. */
export function lineProgress(log: (message: string) => void): Progress {
  return { line: log, update() {} };
}
