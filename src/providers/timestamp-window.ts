// Replay protection for schemes that sign a Unix timestamp: parse it strictly and judge
// it against the caller's `now` in both directions (Standard Webhooks' too-old/too-new).

import { verifyFailure, type VerifyFailure } from './provider.js';

/** Every timestamped scheme we know (Stripe, Standard Webhooks, Slack) allows 5 minutes. */
export const DEFAULT_TOLERANCE_MS = 300_000;

// 15 digits keeps the value a safe integer and well inside Date's range.
const UNIX_SECONDS = /^\d{1,15}$/;

/** Whole Unix seconds from header text, or null when it is not a plain non-negative integer. */
export function parseUnixSeconds(text: string): number | null {
  return UNIX_SECONDS.test(text) ? Number(text) : null;
}

/**
 * A failure when `signedAtSeconds` lies more than `toleranceMs` before or after `now`,
 * else null. `headerName` is only used in the message.
 */
export function checkTimestampWindow(
  signedAtSeconds: number,
  now: Date,
  toleranceMs: number,
  headerName: string,
): VerifyFailure | null {
  const ageMs = now.getTime() - signedAtSeconds * 1000;
  const toleranceSeconds = Math.round(toleranceMs / 1000);
  if (ageMs > toleranceMs) {
    return verifyFailure(
      'stale_timestamp',
      `${headerName} is ${Math.round(ageMs / 1000)} s in the past; tolerance is ${toleranceSeconds} s (a replay, or a slow clock).`,
    );
  }
  if (-ageMs > toleranceMs) {
    return verifyFailure(
      'future_timestamp',
      `${headerName} is ${Math.round(-ageMs / 1000)} s in the future; tolerance is ${toleranceSeconds} s (a clock that is off).`,
    );
  }
  return null;
}
