// Slows down guessing the dashboard token: wrong tokens (at the login form or as a bearer
// token) are counted per client address, and once an address has sent 10 in a minute its
// token attempts are refused, unchecked, until that minute is over. A refused attempt is
// never checked, so a guess cannot be confirmed while throttled. Requests that carry a
// session cookie are not counted or refused: an operator already logged in keeps working
// while someone else guesses from the same address (a reverse proxy's, say).
//
// Kept in the process: a restart or a second instance starts counting again, which still
// caps a guesser at a few hundred tries a day per address per instance.

import { LoginThrottledError } from '../core/errors.js';

export interface LoginThrottleOptions {
  /** Wrong tokens an address may send within a window. @default 10 */
  readonly maxFailures?: number;
  /** @default 60000 */
  readonly windowMs?: number;
  /** Addresses remembered at once; past it the oldest windows are forgotten first. @default 10000 */
  readonly maxAddresses?: number;
}

interface FailureWindow {
  readonly startedAt: number;
  count: number;
}

export class LoginThrottle {
  private readonly windows = new Map<string, FailureWindow>();
  private readonly maxFailures: number;
  private readonly windowMs: number;
  private readonly maxAddresses: number;

  constructor(options: LoginThrottleOptions = {}) {
    this.maxFailures = options.maxFailures ?? 10;
    this.windowMs = options.windowMs ?? 60_000;
    this.maxAddresses = options.maxAddresses ?? 10_000;
  }

  /** @throws LoginThrottledError while `address` has used up its wrong tokens for the window */
  check(address: string, nowMs: number): void {
    const window = this.current(address, nowMs);
    if (window && window.count >= this.maxFailures) throw new LoginThrottledError(window.startedAt + this.windowMs - nowMs);
  }

  /** Counts a wrong token from `address`. */
  fail(address: string, nowMs: number): void {
    const window = this.current(address, nowMs);
    if (window) {
      window.count++;
      return;
    }
    // Insertion order is age order: the first keys are the oldest windows.
    if (this.windows.size >= this.maxAddresses) this.forgetOldest();
    this.windows.set(address, { startedAt: nowMs, count: 1 });
  }

  private current(address: string, nowMs: number): FailureWindow | null {
    const window = this.windows.get(address);
    if (!window) return null;
    if (nowMs - window.startedAt < this.windowMs) return window;
    this.windows.delete(address);
    return null;
  }

  private forgetOldest(): void {
    for (const address of this.windows.keys()) {
      if (this.windows.size < this.maxAddresses) return;
      this.windows.delete(address);
    }
  }
}
