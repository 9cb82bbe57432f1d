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
import type { DeliveryRecord, DeliveryRecordManyParams } from './outgoing-store.js';

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
 * A batch of successes only (attempts that succeeded, or nothing sent, and no disable): its
 * successes per endpoint, endpoints in id order; null for any other batch. Such a batch has
 * nothing to decide between reading health rows and writing them (healthAfterAttempts of
 * successes only: counters up, streak over, breaker closed, window counted), so a store may
 * fold it in one statement.
 */
export function successesOnly(records: readonly DeliveryRecord[]): { readonly endpointIds: string[]; readonly counts: number[] } | null {
  const counts = new Map<string, number>();
  for (const record of records) {
    if ((record.attempt !== 'success' && record.attempt !== null) || record.disableReason) return null;
    if (record.attempt === 'success') counts.set(record.endpointId, (counts.get(record.endpointId) ?? 0) + 1);
  }
  const endpointIds = [...counts.keys()].sort(compareJobIds);
  return { endpointIds, counts: endpointIds.map((id) => counts.get(id)!) };
}

/** One endpoint's attempts of the batch folded into its health row, at `nowMs`. */
export function healthAfterAttempts(healthRow: Row, endpointId: string, params: DeliveryRecordManyParams, nowMs: number): HealthAfterAttempts {
  let breaker = breakerFromRow(healthRow);
  let counters = countersFromRow(healthRow);
  let disable: HealthAfterAttempts['disable'] = null;
  params.records.forEach((record, recordIndex) => {
    if (record.endpointId !== endpointId || record.attempt === null) return;
    const isSuccess = record.attempt === 'success';
    counters = countersAfter(counters, isSuccess, nowMs);
    if (record.attempt !== 'failure') breaker = recordOutcome(breaker, !isSuccess, nowMs, params.breaker);
    if (disable !== null) return;
    const streakMs = counters.failingSince === null ? 0 : nowMs - counters.failingSince;
    const reason = record.disableReason ?? (streakMs >= params.disableAfterMs ? streakReason(counters.failingSince!) : null);
    if (reason !== null) disable = { recordIndex, reason };
  });
  return { endpointId, breaker, counters, disable };
}
