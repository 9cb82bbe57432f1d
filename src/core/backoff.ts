// Exponential backoff with jitter (pure). Jitter spreads retries so a recovering
// downstream is not hit by every failed job in lockstep.

export type Jitter = 'full' | 'equal' | 'none';

export interface BackoffOptions {
  /** Delay before the 2nd attempt; doubles per attempt. @default 2000 (2^attempt seconds) */
  readonly baseMs: number;
  /** No delay is ever longer than this. @default 900000 (15 minutes) */
  readonly capMs: number;
  /** @default 'equal' */
  readonly jitter: Jitter;
}

/** 2^attempt seconds before jitter: 2 s after the first failure, 4 s, 8 s, … capped at 15 min. */
export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 2_000, capMs: 15 * 60_000, jitter: 'equal' };

/**
 * The delay after attempt `attempt` (1-based) failed: base·2^(attempt-1), jittered, never
 * above the cap. `random` is injectable for tests.
 */
export function computeBackoffMs(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(attempt - 1, 52));
  const raw = Math.min(options.capMs, options.baseMs * 2 ** exponent);
  switch (options.jitter) {
    case 'none':
      return raw;
    case 'full':
      return Math.floor(random() * raw);
    case 'equal':
      return Math.floor(raw / 2 + random() * (raw / 2));
  }
}

/** The Standard Webhooks retry schedule: now, 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const STANDARD_WEBHOOKS_SCHEDULE_MS: readonly number[] = [
  5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000,
];

/** Delay after attempt `attempt` failed, from a fixed schedule with ±`jitterRatio` jitter. */
export function scheduleDelayMs(
  attempt: number,
  scheduleMs: readonly number[],
  jitterRatio = 0.2,
  random: () => number = Math.random,
): number {
  if (scheduleMs.length === 0) return 0;
  const base = scheduleMs[Math.min(attempt - 1, scheduleMs.length - 1)]!;
  return Math.max(0, Math.round(base * (1 - jitterRatio + 2 * jitterRatio * random())));
}
