/**
 * Listeners a renewed certificate replaced, each stopped a while after it was retired
 * (the public port's keep telling their clients to reconnect, the admin port's take in
 * what waits in their accept queue), or at once when the server stops: a stop never waits
 * out their time.
 */
export class RetiringListeners<T> {
  private readonly timers = new Map<T, ReturnType<typeof setTimeout>>();

  constructor(
    private readonly delayMs: number,
    private readonly stopListener: (listener: T) => void,
  ) {}

  /** Stops `listener` in delayMs. */
  retire(listener: T): void {
    this.timers.set(
      listener,
      setTimeout(() => {
        this.timers.delete(listener);
        this.stopListener(listener);
      }, this.delayMs),
    );
  }

  /** Stops every listener still waiting, now. */
  stopAll(): void {
    for (const [listener, timer] of this.timers) {
      clearTimeout(timer);
      this.stopListener(listener);
    }
    this.timers.clear();
  }
}
