// When the worker's hot chain (claim -> run -> settle -> claim) must let the event loop
// turn; the claim loop (producer.ts) says why, with the measurement.

/** How long the claim loop or a settling handler may keep the event loop busy before it yields a turn. */
const YIELD_EVERY_MS = 4;

/** Shared by the claim loop and the worker's settle path: one clock for both. */
export class YieldPacer {
  private lastYieldAt = 0;

  /** The event loop has not turned for YIELD_EVERY_MS: let timers, I/O and flushes run. */
  isDue(): boolean {
    return performance.now() - this.lastYieldAt >= YIELD_EVERY_MS;
  }

  /** The event loop just turned (a setImmediate ran). */
  yielded(): void {
    this.lastYieldAt = performance.now();
  }
}
