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

  /** Drop a waiter that has not run yet (its wait ended some other way). */
  forget(waiter: () => void): void {
    const index = this.waiters.indexOf(waiter);
    if (index >= 0) this.waiters.splice(index, 1);
  }
}
