// The per-endpoint circuit breaker (SPEC §6a) as pure rules over the state the store keeps
// (mailroom_endpoint_health), so both stores apply the same ones inside their own
// transaction and every worker on every machine sees one breaker. Closed: deliveries go;
// a failure ratio over a window opens it. Open: deliveries wait, uncharged, until the
// open period ends; then one delivery is let through as a probe (half-open). The probe's
// success closes it; its failure opens it again for twice as long, up to a cap, so a
// receiver down for hours gets a handful of probes rather than one request per delivery.

import type { BreakerState } from './outgoing-types.js';

export interface BreakerSettings {
  /** Outcomes are counted in windows of this length. @default 60000 */
  readonly windowMs: number;
  /** Fewer attempts than this in a window never open the breaker. @default 5 */
  readonly minAttempts: number;
  /** Failures / attempts in the window at or above this open it. @default 0.5 */
  readonly failureRatio: number;
  /** The first open period. @default 60000 */
  readonly openMs: number;
  /** Open periods double per failed probe up to this. @default 1800000 (30 minutes) */
  readonly maxOpenMs: number;
  /** How long a probe holds the half-open breaker before another may go (a crashed probe). @default 60000 */
  readonly probeMs: number;
  /** How often deliveries waiting on a probe look again. @default 2000 */
  readonly probeRecheckMs: number;
}

export const DEFAULT_BREAKER_SETTINGS: BreakerSettings = {
  windowMs: 60_000,
  minAttempts: 5,
  failureRatio: 0.5,
  openMs: 60_000,
  // Doubling from one minute to half an hour: an hour's outage sees 6 probes, a day's ~50.
  maxOpenMs: 30 * 60_000,
  probeMs: 60_000,
  probeRecheckMs: 2_000,
};

/** The breaker's part of an endpoint's health row; times are epoch ms. */
export interface BreakerRow {
  readonly state: BreakerState;
  readonly openedAt: number | null;
  readonly openMs: number | null;
  readonly probeUntil: number | null;
  readonly windowStartedAt: number | null;
  readonly windowSuccesses: number;
  readonly windowFailures: number;
}

export const CLOSED_BREAKER: BreakerRow = {
  state: 'closed',
  openedAt: null,
  openMs: null,
  probeUntil: null,
  windowStartedAt: null,
  windowSuccesses: 0,
  windowFailures: 0,
};

/** Why a delivery must wait: its endpoint's breaker is open, a probe is in flight, or its rate is used up. */
export type WaitReason = 'breaker_open' | 'probing' | 'rate_limit';

/** What a delivery about to be sent may do. `probe` carries the row to write (the probe is taken). */
export type Admission =
  | { readonly kind: 'send' }
  | { readonly kind: 'probe'; readonly row: BreakerRow }
  | { readonly kind: 'wait'; readonly waitMs: number; readonly reason: WaitReason };

/** May a delivery go now? */
export function admitDelivery(row: BreakerRow, nowMs: number, settings: BreakerSettings): Admission {
  if (row.state === 'closed') return { kind: 'send' };
  if (row.state === 'open') {
    const reopensAt = (row.openedAt ?? nowMs) + (row.openMs ?? settings.openMs);
    if (nowMs < reopensAt) return { kind: 'wait', waitMs: reopensAt - nowMs, reason: 'breaker_open' };
  } else if (row.probeUntil !== null && nowMs < row.probeUntil) {
    return { kind: 'wait', waitMs: Math.min(row.probeUntil - nowMs, settings.probeRecheckMs), reason: 'probing' };
  }
  return { kind: 'probe', row: { ...row, state: 'half_open', probeUntil: nowMs + settings.probeMs } };
}

/**
 * The row after one attempt's outcome. `isFailure` only for failures that say the
 * endpoint is unwell (5xx, timeouts, network errors); a refused request (4xx) is not.
 */
export function recordOutcome(row: BreakerRow, isFailure: boolean, nowMs: number, settings: BreakerSettings): BreakerRow {
  if (!isFailure) {
    // Any success, the probe's or a late one, says the endpoint answers: close.
    if (row.state !== 'closed') return { ...CLOSED_BREAKER, windowStartedAt: nowMs, windowSuccesses: 1 };
  } else if (row.state === 'half_open') {
    return reopen(row, nowMs, Math.min((row.openMs ?? settings.openMs) * 2, settings.maxOpenMs));
  } else if (row.state === 'open') {
    // A late failure of a delivery sent before it opened: the breaker already knows.
    return row;
  }
  const isNewWindow = row.windowStartedAt === null || nowMs - row.windowStartedAt >= settings.windowMs;
  const successes = (isNewWindow ? 0 : row.windowSuccesses) + (isFailure ? 0 : 1);
  const failures = (isNewWindow ? 0 : row.windowFailures) + (isFailure ? 1 : 0);
  const next: BreakerRow = { ...row, windowStartedAt: isNewWindow ? nowMs : row.windowStartedAt, windowSuccesses: successes, windowFailures: failures };
  const attempts = successes + failures;
  if (isFailure && attempts >= settings.minAttempts && failures / attempts >= settings.failureRatio) return reopen(next, nowMs, settings.openMs);
  return next;
}

/** When an open breaker lets its next probe go; null while closed or probing. */
export function breakerRetryAt(row: BreakerRow, settings: BreakerSettings): number | null {
  if (row.state !== 'open' || row.openedAt === null) return null;
  return row.openedAt + (row.openMs ?? settings.openMs);
}

function reopen(row: BreakerRow, nowMs: number, openMs: number): BreakerRow {
  return { ...row, state: 'open', openedAt: nowMs, openMs, probeUntil: null, windowStartedAt: null, windowSuccesses: 0, windowFailures: 0 };
}
