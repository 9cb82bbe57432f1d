// Slows down guessing the dashboard token: wrong tokens (at the login form or as a bearer
// token) are counted per client address, and once an address has sent 10 in a minute its
// token attempts are refused, unchecked, until that minute is over. A refused attempt is
// never checked, so a guess cannot be confirmed while throttled. Requests that carry a
// session cookie are not counted or refused: an operator already logged in keeps working
// while someone else guesses from the same address (a reverse proxy's, say).
//
// An IPv6 client is counted by its /64, since one host commonly holds a whole /64 and could
// otherwise take a fresh address for every 10 guesses.
//
// Kept in the process: a restart or a second instance starts counting again. That caps a
// guesser at 14,400 tries a day per address (per /64) and instance: nothing against the
// generated token's 256 bits, and a wall against trying a dictionary at network speed.

import { LoginThrottledError } from '../core/errors.js';
import { ipaddr } from '../core/ipaddr.js';
import type { IPv6 } from 'ipaddr.js';

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

  /**
   * @param client `clientKeyOf` the request's address, worked out once for check and fail
   * @throws LoginThrottledError while `client` has used up its wrong tokens for the window
   */
  check(client: string, nowMs: number): void {
    const window = this.current(client, nowMs);
    if (window && window.count >= this.maxFailures) throw new LoginThrottledError(window.startedAt + this.windowMs - nowMs);
  }

  /** Counts a wrong token from `client` (a `clientKeyOf`). */
  fail(client: string, nowMs: number): void {
    const window = this.current(client, nowMs);
    if (window) {
      window.count++;
      return;
    }
    // Insertion order is age order: the first keys are the oldest windows.
    if (this.windows.size >= this.maxAddresses) this.forgetOldest();
    this.windows.set(client, { startedAt: nowMs, count: 1 });
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

/** Whom an address counts as: an IPv4 address (an IPv4-mapped IPv6 one too) itself, an IPv6 address its /64. */
export function clientKeyOf(address: string): string {
  const lib = ipaddr();
  if (!lib.isValid(address)) return address;
  const parsed = lib.process(address);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  return `${(parsed as IPv6).parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`;
}
