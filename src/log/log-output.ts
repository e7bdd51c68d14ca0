/**
 * Where a server's log lines go, with a bound on what may wait for the reader: a stalled
 * pipe or journal would otherwise make every unwritten line pile up in memory. Batches
 * are handed to `write`, which calls `written` once the reader has taken them, or with
 * true once they cannot be written (stderr closed: the reader is gone); while more than
 * `maxPendingBytes` wait, new batches are dropped. Either way their lines are counted.
 */
export class LogOutput {
  private pending = 0;

  /**
   * @param onBacklog told what waits for the reader whenever that changes
   */
  constructor(
    private readonly output: (text: string, written: (failed?: boolean) => void) => void,
    private readonly onDropped: (lines: number) => void,
    private readonly maxPendingBytes = 1024 * 1024,
    private readonly onBacklog: (bytes: number) => void = () => {},
  ) {}

  /** Writes a batch of lines (joined by newlines, without the last one). */
  readonly write = (text: string): void => {
    if (this.pending + text.length > this.maxPendingBytes) {
      this.onDropped(lineCount(text));
      return;
    }
    const size = text.length;
    this.pending += size;
    this.onBacklog(this.pending);
    this.output(text, (failed) => {
      this.pending -= size;
      this.onBacklog(this.pending);
      if (failed) this.onDropped(lineCount(text));
    });
  };

  /** Characters handed to the output and not yet taken by the reader. */
  get pendingBytes(): number {
    return this.pending;
  }
}

function lineCount(text: string): number {
  let lines = 1;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
  return lines;
}
