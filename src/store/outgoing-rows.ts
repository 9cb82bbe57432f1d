// Rows of the outgoing-webhook tables as Endpoint, Message, Delivery, EndpointHealth and
// the breaker's state, once for both stores (as rows.ts does for jobs). No mapper here
// reads the `secret` columns: a listing that selected them still could not leak them.

import { breakerRetryAt } from '../core/circuit-breaker.js';
import type { BreakerRow, BreakerSettings } from '../core/circuit-breaker.js';
import type { BreakerState, Delivery, Endpoint, EndpointDisabledBy, EndpointHealth, Message } from '../core/outgoing-types.js';
import type { EndpointRotateSecretResult, EndpointStatsResult } from './outgoing-store.js';
import { compareJobIds } from './claimed-job.js';
import { jsonOf, optionalTimeOf, timeOf } from './rows.js';
import type { Row } from './rows.js';

export function endpointFromRow(row: Row): Endpoint {
  const enabled = row.enabled === true || row.enabled === 1;
  return {
    id: String(row.id),
    tenant: row.tenant,
    url: row.url,
    description: row.description ?? null,
    eventTypes: jsonOf(row.event_types) as string[] | null,
    enabled,
    disabledReason: row.disabled_reason ?? null,
    // NULL on a disabled endpoint: disabled by code before 0017 (or not yet classified): the operator's, the safe side.
    disabledBy: enabled ? null : ((row.disabled_by ?? 'operator') as EndpointDisabledBy),
    // Fails closed: a read that lost the column gets the tenant's (stricter) SSRF allowlist.
    addedBy: row.added_by === 'operator' ? 'operator' : 'tenant',
    rateLimit: jsonOf(row.rate_limit) as Endpoint['rateLimit'],
    metadata: jsonOf(row.metadata) as Endpoint['metadata'],
    createdAt: timeOf(row.created_at),
    updatedAt: timeOf(row.updated_at),
  };
}

/** A message with its payload parsed (listings) or as the stored text (the deliver task sends it byte for byte). */
export function messageFromRow(row: Row): Message;
export function messageFromRow(row: Row, raw: true): Message<string>;
export function messageFromRow(row: Row, raw = false): Message<unknown> {
  return {
    id: String(row.id),
    tenant: row.tenant,
    type: row.type,
    payload: raw ? row.payload : JSON.parse(row.payload),
    key: row.key ?? null,
    createdAt: timeOf(row.created_at),
  };
}

/** A delivery row joined with its message (tenant, type) and job (status, attempts, last error). */
export function deliveryFromRow(row: Row): Delivery {
  return {
    id: String(row.id),
    messageId: String(row.message_id),
    endpointId: String(row.endpoint_id),
    tenant: row.tenant,
    type: row.type,
    status: row.status,
    jobId: row.job_id === null || row.job_id === undefined ? null : String(row.job_id),
    attempts: Number(row.attempts ?? 0),
    lastError: row.last_error ?? null,
    createdAt: timeOf(row.created_at),
    updatedAt: timeOf(row.updated_at),
  };
}

/** The breaker's part of a mailroom_endpoint_health row, times as epoch ms. */
export function breakerFromRow(row: Row): BreakerRow {
  return {
    state: row.breaker_state,
    openedAt: msOf(row.opened_at),
    openMs: row.open_ms === null || row.open_ms === undefined ? null : Number(row.open_ms),
    probeUntil: msOf(row.probe_until),
    windowStartedAt: msOf(row.window_started_at),
    windowSuccesses: Number(row.window_successes),
    windowFailures: Number(row.window_failures),
  };
}

export function healthFromRow(row: Row, settings: BreakerSettings): EndpointHealth {
  const successes = Number(row.successes);
  const failures = Number(row.failures);
  const retryAt = breakerRetryAt(breakerFromRow(row), settings);
  return {
    endpointId: String(row.endpoint_id),
    successRate: successes + failures === 0 ? null : successes / (successes + failures),
    successes,
    failures,
    lastSuccessAt: optionalTimeOf(row.last_success_at),
    lastFailureAt: optionalTimeOf(row.last_failure_at),
    failingSince: optionalTimeOf(row.failing_since),
    breakerState: row.breaker_state,
    breakerRetryAt: retryAt === null ? null : new Date(retryAt),
    backlog: Number(row.backlog ?? 0),
  };
}

/** An endpoint's health counters (the breaker aside), as epoch ms. */
export interface HealthCounters {
  readonly successes: number;
  readonly failures: number;
  readonly lastSuccessAt: number | null;
  readonly lastFailureAt: number | null;
  readonly failingSince: number | null;
}

export function countersAfter(counters: HealthCounters, isSuccess: boolean, nowMs: number): HealthCounters {
  return {
    successes: counters.successes + (isSuccess ? 1 : 0),
    failures: counters.failures + (isSuccess ? 0 : 1),
    lastSuccessAt: isSuccess ? nowMs : counters.lastSuccessAt,
    lastFailureAt: isSuccess ? counters.lastFailureAt : nowMs,
    failingSince: isSuccess ? null : (counters.failingSince ?? nowMs),
  };
}

/** A health row's counters, as epoch ms. */
export function countersFromRow(row: Row): HealthCounters {
  return {
    successes: Number(row.successes),
    failures: Number(row.failures),
    lastSuccessAt: msOf(row.last_success_at),
    lastFailureAt: msOf(row.last_failure_at),
    failingSince: msOf(row.failing_since),
  };
}

/** The signing secrets in force at `nowMs`: the current one, and the previous one within its overlap. */
export function secretsInForce(row: Row, nowMs: number): string[] {
  const until = msOf(row.previous_secret_until);
  return row.previous_secret && until !== null && until > nowMs ? [row.secret, row.previous_secret] : [row.secret];
}

/**
 * What a rotation at `nowMs` with `overlapMs` does to the row: it rotates, or it is
 * refused while an earlier rotation's old secret still signs, because the new rotation
 * would stop signing with that secret at once (the customer may still hold it). An
 * overlap of 0 is the deliberate "stop every earlier secret now", so it always rotates.
 */
export function rotationOf(row: Row, nowMs: number, overlapMs: number): EndpointRotateSecretResult {
  const until = msOf(row.previous_secret_until);
  if (overlapMs > 0 && row.previous_secret && until !== null && until > nowMs) return { rotated: false, overlapUntil: new Date(until) };
  return { rotated: true, previousUntil: new Date(nowMs + overlapMs) };
}

/** The payload of a deliver job: what the task needs to find its delivery. */
export function deliverPayloadJson(deliveryId: string, messageId: string, endpointId: string): string {
  return JSON.stringify({ deliveryId, messageId, endpointId });
}

/** endpointStats from its rows (counts by enabled × breaker state, backlog per endpoint). */
export function endpointStatsFromRows(counts: readonly Row[], top: readonly Row[], totalBacklog: unknown): EndpointStatsResult {
  const result = { enabled: 0, disabled: 0, breakers: { closed: 0, open: 0, half_open: 0 }, backlog: Number(totalBacklog ?? 0), topBacklog: top.map((row) => ({ endpointId: String(row.endpoint_id), backlog: Number(row.backlog) })) };
  for (const row of counts) {
    const n = Number(row.n);
    if (row.enabled === true || row.enabled === 1) result.enabled += n;
    else result.disabled += n;
    result.breakers[row.breaker_state as BreakerState] += n;
  }
  return result;
}

function msOf(value: unknown): number | null {
  return value === null || value === undefined ? null : timeOf(value).getTime();
}

/** What recover does with an endpoint's failed and skipped deliveries (deliveryRecoverable's rows). */
export interface RecoveryPlan {
  /** Deliveries whose own job ended (dead, or done having skipped them): that job is replayed. */
  readonly toReplay: readonly Row[];
  /** Deliveries without a job any more (skipped at publish, or deleted by retention), or whose job is only finishing: a new one. */
  readonly toCreate: readonly Row[];
}

/**
 * A recovered delivery goes back on the job it had when that job is still there, so its
 * attempts so far (the failures that disabled the endpoint, say) and the new ones read as
 * one history; a job of its own only when it has none, or when its job is running only
 * to finish (its attempt recorded). One whose job is pending, or running an attempt (a
 * portal re-send in line), is left alone: a second job would send it twice.
 */
export function planRecovery(rows: readonly Row[]): RecoveryPlan {
  const toReplay: Row[] = [];
  const toCreate: Row[] = [];
  for (const row of rows) {
    const isFinishing = row.job_status === 'running' && (row.attempt_recorded === true || row.attempt_recorded === 1);
    // A job only finishing (its attempt recorded, its outcome not yet) sends nothing more: a new job, as for none.
    if (row.job_id === null || row.job_id === undefined || isFinishing) toCreate.push(row);
    else if (row.job_status === 'dead' || row.job_status === 'done') toReplay.push(row);
  }
  return { toReplay, toCreate };
}

/**
 * The replay of a recovered delivery's job (forced: a job that skipped it is done), with the
 * attempt budget a new deliver job gets now (the deliver settings may have changed since).
 */
export function recoveryReplay(since: Date, job: { readonly maxAttempts: number }): { reason: string; by: string; force: true; includeCancelled: true; maxAttempts: number } {
  return { reason: `endpoint recovery of deliveries since ${since.toISOString()}`, by: 'recover', force: true, includeCancelled: true, maxAttempts: job.maxAttempts };
}

/**
 * The deliveries recovered, in delivery order: those whose job the replay moved (the
 * replay puts a deliver job's delivery back to pending itself) and those given a new job.
 * A job that changed between the read and the replay (retention deleted it, another
 * replay put it back in line) was not replayed, and its delivery is not reported; a later
 * recovery finds it again.
 */
export function recoveredAfter(plan: RecoveryPlan, replayedJobIds: ReadonlySet<string>): string[] {
  const replayed = plan.toReplay.filter((row) => replayedJobIds.has(String(row.job_id)));
  return [...replayed, ...plan.toCreate].map((row) => String(row.id)).sort(compareJobIds);
}
