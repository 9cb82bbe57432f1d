// What a batch of recorded attempts does to their endpoints' health, the same rule in both
// stores, applied in deliveryRecordMany's transaction. Each endpoint's attempts are folded
// into its health row in the order given: counters, the circuit breaker (an outage counts
// for it, a refusal does not) and the failure streak that disables an endpoint. A batch
// reads and writes each endpoint's row once, where a transaction per attempt read and
// wrote it once per attempt.

import { recordOutcome } from '../core/circuit-breaker.js';
import { compareJobIds } from './claimed-job.js';
import type { BreakerRow } from '../core/circuit-breaker.js';
import type { Row } from './rows.js';
import { streakReason } from '../core/disable-reasons.js';
import { breakerFromRow, countersAfter, countersFromRow } from './outgoing-rows.js';
import type { HealthCounters } from './outgoing-rows.js';
import type { BreakerSettings } from '../core/circuit-breaker.js';
import type { DeliveryRecord, DeliveryRecordManyParams } from './outgoing-store.js';
import type { JobFinish } from './store.js';

/** An endpoint's health after its attempts: what to write, and whether to disable it. */
export interface HealthAfterAttempts {
  readonly endpointId: string;
  readonly breaker: BreakerRow;
  readonly counters: HealthCounters;
  /** The first attempt that calls for a disable (a 410, or the streak reaching its limit), with its reason. */
  readonly disable: { readonly recordIndex: number; readonly reason: string } | null;
}

/** The endpoints whose health this batch changes (records with an attempt), in id order. */
export function endpointsWithAttempts(records: readonly DeliveryRecord[]): string[] {
  const ids = new Set<string>();
  for (const record of records) if (record.attempt !== null) ids.add(record.endpointId);
  return [...ids].sort(compareJobIds);
}

/**
 * One endpoint's attempts of the batch folded into its health row, at `nowMs`. A streak
 * that reached its limit disables only if it still runs after the batch: the attempts of
 * one batch were answered in the same moment, and a success recorded after the failure
 * ended that streak (a failure after the success starts a new one). A 410 disables either way.
 */
export function healthAfterAttempts(healthRow: Row, endpointId: string, params: DeliveryRecordManyParams, nowMs: number): HealthAfterAttempts {
  let breaker = breakerFromRow(healthRow);
  let counters = countersFromRow(healthRow);
  /** The first record that said to disable (a 410), and the first the streak's limit reached. */
  let told: HealthAfterAttempts['disable'] = null;
  let streak: HealthAfterAttempts['disable'] = null;
  for (const [recordIndex, record] of params.records.entries()) {
    if (record.endpointId !== endpointId || record.attempt === null) continue;
    const isSuccess = record.attempt === 'success';
    counters = countersAfter(counters, isSuccess, nowMs);
    if (record.attempt !== 'failure') breaker = recordOutcome(breaker, !isSuccess, nowMs, params.breaker);
    if (record.disableReason != null) told ??= { recordIndex, reason: record.disableReason };
    if (isStreakDue(counters.failingSince, nowMs, params.disableAfterMs)) streak ??= { recordIndex, reason: streakReason(counters.failingSince!) };
  }
  if (!isStreakDue(counters.failingSince, nowMs, params.disableAfterMs)) streak = null;
  const disable = told && streak ? (told.recordIndex < streak.recordIndex ? told : streak) : (told ?? streak);
  return { endpointId, breaker, counters, disable };
}

/** A failure streak is running and has lasted the limit. */
function isStreakDue(failingSince: number | null, nowMs: number, disableAfterMs: number): boolean {
  return failingSince !== null && nowMs - failingSince >= disableAfterMs;
}

/**
 * The deliver successes that ride on `done` finishes (JobFinish `delivered`; not fenced,
 * as deliveryRecordMany is not), as record batches in the finishes' order: one per breaker
 * setting, which a worker's finishes share. A success cannot disable, so no streak limit
 * applies.
 */
export function deliveredWithFinishes(finishes: readonly JobFinish[], now: Date): DeliveryRecordManyParams[] {
  const byBreaker = new Map<BreakerSettings, DeliveryRecord[]>();
  for (const finish of finishes) {
    if (finish.kind !== 'done' || !finish.delivered || finish.holdLease) continue;
    const { deliveryId, endpointId, breaker } = finish.delivered;
    let records = byBreaker.get(breaker);
    if (!records) byBreaker.set(breaker, (records = []));
    records.push({ deliveryId, endpointId, status: 'delivered', attempt: 'success' });
  }
  return [...byBreaker].map(([breaker, records]) => ({ records, breaker, disableAfterMs: Infinity, now }));
}
