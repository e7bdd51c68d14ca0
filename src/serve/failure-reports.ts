/** How often a failure that goes on with the same message is reported again. */
const REPORT_AGAIN_MS = 60_000;

/**
 * Turns the failures of something tried again and again (a thread's store poll, every
 * 250 ms) into a few reports: one when a step starts failing, again when its message
 * changes or at most once every `everyMs` while it stays the same, and one when it
 * works again. Each step, by its name, is followed apart.
 */
export class FailureReports {
  /** The steps failing now: the message last reported, and when. */
  private readonly failing = new Map<string, { error: string; at: number }>();

  constructor(
    private readonly report: (step: string, error: string | null) => void,
    private readonly now: () => number = () => performance.now(),
    private readonly everyMs = REPORT_AGAIN_MS,
  ) {}

  /** `step` failed with `error` (its message). */
  failed(step: string, error: string): void {
    const now = this.now();
    const last = this.failing.get(step);
    if (last && last.error === error && now - last.at < this.everyMs) return;
    this.failing.set(step, { error, at: now });
    this.report(step, error);
  }

  /** Every step worked: those that were failing are reported (error null), once. */
  passed(): void {
    for (const step of this.failing.keys()) this.report(step, null);
    this.failing.clear();
  }
}
