// "Something changed in this worker" (a job settled, a claim came back, an outcome was
// written): the claim loop, drained() and stop() wait on it instead of polling or sleeping.

/** One-shot waiters, all released by the next notify(). */
export class ChangeSignal {
  private waiters: Array<() => void> = [];

  /** Release every waiter registered so far (each runs once). */
  notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves at the next notify(). */
  next(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Run `waiter` at the next notify(). */
  once(waiter: () => void): void {
    this.waiters.push(waiter);
  }

  /**
   * Resolves once `until()` holds (now, or after a notify()), or after `ms`. One timer for
   * the whole wait, cleared when the wait ends, and the waiter dropped when the timer ends
   * it: a timer left behind would keep the process alive to its end.
   */
  waitFor(until: () => boolean, ms: number): Promise<void> {
    if (until()) return Promise.resolve();
    return new Promise((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.forget(check);
        resolve();
      };
      const check = () => (until() ? finish() : this.once(check));
      const timer = setTimeout(finish, Math.max(0, ms));
      this.once(check);
    });
  }

  /** Drop a waiter that has not run yet (its wait ended some other way). */
  forget(waiter: () => void): void {
    const index = this.waiters.indexOf(waiter);
    if (index >= 0) this.waiters.splice(index, 1);
  }
}
