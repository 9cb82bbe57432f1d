// The outgoing-webhook Store methods for PostgreSQL (outgoing-store.ts), written against a
// QueryRunner like every other method, so they run on the pool, inside store.transaction()
// and on a caller's own client (publish in the caller's transaction: the outbox).
// PostgresExecutor extends this class. Semantics mirror sqlite/sqlite-outgoing-executor.ts;
// statements are in sql/endpoint.sql and sql/message.sql. Each call reads the store's now
// once (claimClock), so the breaker's rules see one instant of the server's clock.

import { compareJobIds } from '../claimed-job.js';
import { ENDPOINT_RATE_TYPE, admitAtEndpoint, isHandedToAnotherJob } from '../delivery-admission.js';
import { endpointsWithAttempts, healthAfterAttempts } from '../delivery-health.js';
import type { HealthAfterAttempts } from '../delivery-health.js';
import { MessageKeyConflictError } from '../../core/errors.js';
import { sameJson } from '../../core/canonical-json.js';
import { endpointReceives } from '../../core/outgoing-types.js';
import type { Delivery, Endpoint, EndpointHealth, Message } from '../../core/outgoing-types.js';
import {
  breakerFromRow,
  countersFromRow,
  deliverPayloadJson,
  deliveryFromRow,
  endpointFromRow,
  endpointStatsFromRows,
  healthFromRow,
  messageFromRow,
  planRecovery,
  recoveredAfter,
  recoveryReplay,
  secretsInForce,
  rotationOf,
} from '../outgoing-rows.js';
import { clampLimit, timeOf } from '../rows.js';
import type {
  DeliveryListParams,
  DeliveryRecordManyParams,
  DeliveryRecordResult,
  DeliveryRecoverParams,
  DeliveryStart,
  DeliveryStartManyParams,
  EndpointAddParams,
  EndpointGetParams,
  EndpointHealthParams,
  EndpointListParams,
  EndpointRotateSecretParams,
  EndpointRotateSecretResult,
  EndpointSetEnabledParams,
  EndpointStatsParams,
  EndpointStatsResult,
  EndpointUpdateParams,
  MessageGetParams,
  MessageListParams,
  MessagePublishParams,
  MessagePublishResult,
  OutgoingExecutor,
} from '../outgoing-store.js';
import type { JobInsert, JobInsertResult, JobReplayParams } from '../store.js';
import { isJobId } from './job-filter.js';
import type { QueryRunner, Row } from './query-runner.js';

export abstract class PostgresOutgoingExecutor implements OutgoingExecutor {
  protected abstract readonly runner: QueryRunner;
  protected abstract stmt(name: string): string;
  protected abstract insertJobs(runner: QueryRunner, jobs: readonly JobInsert[], now: Date | undefined, event: null): Promise<JobInsertResult[]>;
  protected abstract replayIn(runner: QueryRunner, ids: readonly string[], params: Omit<JobReplayParams, 'ids' | 'filter'>): Promise<string[]>;

  async endpointAdd(params: EndpointAddParams): Promise<Endpoint> {
    return this.runner.atomic(async (runner) => {
      const now = await this.clock(runner, params.now);
      const [row] = await runner.run(this.stmt('endpointAdd'), [
        params.tenant,
        params.url,
        params.description,
        jsonOrNull(params.eventTypes),
        jsonOrNull(params.rateLimit),
        jsonOrNull(params.metadata),
        params.secret,
        now,
        params.addedBy,
      ]);
      await runner.run(this.stmt('endpointAdd.health'), [row!.id]);
      return endpointFromRow(row!);
    });
  }

  async endpointGet(params: EndpointGetParams): Promise<Endpoint | null> {
    if (!isJobId(params.id)) return null;
    const [row] = await this.runner.run(this.stmt('endpointGet'), [params.id]);
    return row ? endpointFromRow(row) : null;
  }

  async endpointList(params: EndpointListParams): Promise<Endpoint[]> {
    const page = [afterOf(params.after), clampLimit(params.limit)];
    const rows =
      params.tenant === undefined
        ? await this.runner.run(this.stmt('endpointList'), page)
        : await this.runner.run(this.stmt('endpointList.tenant'), [...page, params.tenant]);
    return rows.map(endpointFromRow);
  }

  async endpointStats(params: EndpointStatsParams): Promise<EndpointStatsResult> {
    const [counts, top, [total]] = await Promise.all([
      this.runner.run(this.stmt('endpointStats.counts')),
      this.runner.run(this.stmt('endpointStats.backlog'), [Math.max(0, Math.floor(params.topN))]),
      this.runner.run(this.stmt('endpointStats.totalBacklog')),
    ]);
    return endpointStatsFromRows(counts, top, total?.backlog);
  }

  async endpointUpdate(params: EndpointUpdateParams): Promise<Endpoint | null> {
    if (!isJobId(params.id)) return null;
    return this.runner.atomic(async (runner) => {
      if (params.url !== undefined) await this.lockHealthFirst(runner, params.id);
      const [current] = await runner.run(this.stmt('endpointUpdate.current'), [params.id]);
      if (!current) return null;
      const now = await this.clock(runner, params.now);
      const [row] = await runner.run(this.stmt('endpointUpdate'), [
        params.id,
        params.url ?? current.url,
        params.description !== undefined ? params.description : current.description,
        params.eventTypes !== undefined ? jsonOrNull(params.eventTypes) : current.event_types,
        params.rateLimit !== undefined ? jsonOrNull(params.rateLimit) : current.rate_limit,
        params.metadata !== undefined ? jsonOrNull(params.metadata) : current.metadata,
        now,
      ]);
      if (params.url !== undefined && params.url !== current.url) await runner.run(this.stmt('endpointHealth.fresh'), [params.id]);
      return endpointFromRow(row!);
    });
  }

  async endpointSetEnabled(params: EndpointSetEnabledParams): Promise<Endpoint | null> {
    if (!isJobId(params.id)) return null;
    const now = await this.clock(this.runner, params.now);
    const by = params.by ?? 'operator';
    return this.runner.atomic(async (runner) => {
      if (params.enabled) await this.lockHealthFirst(runner, params.id);
      const [before] = await runner.run(this.stmt('endpointSetEnabled.before'), [params.id]);
      const [row] = await runner.run(this.stmt('endpointSetEnabled'), [
        params.id,
        params.enabled,
        params.enabled ? null : params.reason,
        now,
        params.enabled ? null : by,
        by === 'tenant',
        params.keepReason === true,
      ]);
      if (row && params.enabled && before?.enabled === false) await runner.run(this.stmt('endpointHealth.fresh'), [params.id]);
      return row ? endpointFromRow(row) : null;
    });
  }

  async endpointRemove(params: EndpointGetParams): Promise<boolean> {
    if (!isJobId(params.id)) return false;
    return this.runner.atomic(async (runner) => {
      await this.lockHealthFirst(runner, params.id);
      const removed = (await runner.run(this.stmt('endpointRemove'), [params.id])).length > 0;
      await runner.run(this.stmt('endpointRemove.health'), [params.id]);
      return removed;
    });
  }

  async endpointRotateSecret(params: EndpointRotateSecretParams): Promise<EndpointRotateSecretResult | null> {
    if (!isJobId(params.id)) return null;
    return this.runner.atomic(async (runner) => {
      const now = await this.clock(runner, params.now);
      const [row] = await runner.run(this.stmt('endpointRotateSecret.overlap'), [params.id]);
      if (!row) return null;
      const rotation = rotationOf(row, now.getTime(), params.overlapMs);
      if (rotation.rotated) await runner.run(this.stmt('endpointRotateSecret'), [params.id, params.secret, rotation.previousUntil, now]);
      return rotation;
    });
  }

  async endpointHealth(params: EndpointHealthParams): Promise<EndpointHealth | null> {
    if (!isJobId(params.id)) return null;
    const [row] = await this.runner.run(this.stmt('endpointHealth'), [params.id]);
    return row ? healthFromRow(row, params.breaker) : null;
  }

  async messagePublish(params: MessagePublishParams): Promise<MessagePublishResult> {
    if (params.key === null) {
      const [published] = await this.publishKeyless([params]);
      return published!;
    }
    return this.runner.atomic(async (runner) => {
      const now = await this.clock(runner, params.now);
      const [inserted] = await runner.run(this.stmt('messageInsert'), [params.tenant, params.type, params.payloadJson, params.key, now]);
      if (!inserted) {
        const [existing] = await runner.run(this.stmt('messageByKey'), [params.tenant, params.key]);
        if (existing!.type !== params.type || !sameJson(existing!.payload, params.payloadJson)) {
          throw new MessageKeyConflictError(params.key!, String(existing!.id));
        }
        return { message: messageFromRow(existing!), deliveries: await this.deliveriesOf(runner, String(existing!.id)), isDuplicate: true };
      }
      const planned = planDeliveries([params], await this.endpointsOfTenants(runner, [params]));
      const rows =
        planned.length === 0
          ? []
          : await runner.run(this.stmt('deliveryInsert'), [planned.map(() => inserted.id), planned.map((row) => row.endpointId), planned.map((row) => row.status), now]);
      // Ids follow the insert order, the order planned (ORDER BY n).
      rows.sort((a, b) => compareJobIds(a.id, b.id));
      const toSend: DeliverJobToCreate[] = [];
      rows.forEach((row) => {
        if (row.status === 'pending') toSend.push({ deliveryId: String(row.id), endpointId: String(row.endpoint_id), messageId: String(inserted.id), job: params.job });
      });
      const jobIds = await this.createDeliverJobs(runner, toSend, now);
      const jobOf = new Map(toSend.map((delivery, k) => [delivery.deliveryId, jobIds[k]!]));
      const [published] = publishAnswers([params], [inserted], planned, rows.map((row) => ({ id: String(row.id), jobId: jobOf.get(String(row.id)) ?? null })), now);
      return published!;
    });
  }

  /**
   * Several keyless publishes, which the store groups (the rest of an event-loop turn, and
   * those that waited for a statement to finish: grouped-writes.ts), in the statements of one.
   */
  async messagePublishMany(list: readonly MessagePublishParams[]): Promise<MessagePublishResult[]> {
    if (list.some((params) => params.key !== null)) throw new Error('messagePublishMany takes keyless publishes only');
    return this.publishKeyless(list);
  }

  /**
   * Keyless publishes in two round trips, whatever their number: a read of the tenants'
   * endpoints, then one autocommitted statement that writes the messages, their deliveries
   * and the deliveries' jobs (messagePublish.keyless). A transaction of separate statements
   * was nine round trips a publish, each with the server's work for a statement: at 200
   * publishes a second that was most of what a two-core machine could do. An endpoint added,
   * disabled or removed between the two is a race the transaction had too (its read took
   * no lock). Each answer is built from what was written, as an inserted job's is.
   */
  private publishKeyless(list: readonly MessagePublishParams[]): Promise<MessagePublishResult[]> {
    return this.runner.sequence((runner) => this.writeKeyless(runner, list));
  }

  private async writeKeyless(runner: QueryRunner, list: readonly MessagePublishParams[]): Promise<MessagePublishResult[]> {
    const planned = planDeliveries(list, await this.endpointsOfTenants(runner, list));
    const jobs = list.map((params) => params.job);
    const hasTrace = jobs.some((job) => job.traceContext);
    const rows = await runner.run(this.stmt('messagePublish.keyless'), [
      list.map((params) => params.tenant),
      list.map((params) => params.type),
      list.map((params) => params.payloadJson),
      list[0]!.now ?? null,
      planned.map((row) => row.index + 1),
      planned.map((row) => row.endpointId),
      planned.map((row) => row.status),
      jobs.map((job) => job.queue),
      jobs.map((job) => job.type),
      jobs.map((job) => job.priority),
      jobs.map((job) => job.runAt),
      jobs.map((job) => Math.max(0, Math.round(job.delayMs))),
      jobs.map((job) => job.maxAttempts),
      hasTrace ? jobs.map((job) => job.traceContext ?? null) : null,
    ]);
    const ids: unknown[] = rows[0]?.delivery_ids ?? [];
    const jobIds: unknown[] = rows[0]?.delivery_job_ids ?? [];
    const written = ids.map((id, k) => ({ id: String(id), jobId: jobIds[k] === null ? null : String(jobIds[k]) }));
    return publishAnswers(list, rows, planned, written, rows[0]!.created_at);
  }

  /** Each publishing tenant's endpoints, in id order, their event types read once. */
  private async endpointsOfTenants(runner: QueryRunner, list: readonly MessagePublishParams[]): Promise<Map<string, PublishEndpoint[]>> {
    const endpointsOf = new Map<string, PublishEndpoint[]>();
    for (const row of await runner.run(this.stmt('endpointsOfTenant'), [[...new Set(list.map((params) => params.tenant))]])) {
      const endpoint: PublishEndpoint = { id: String(row.id), enabled: Boolean(row.enabled), eventTypes: JSON.parse(row.event_types ?? 'null') };
      const ofTenant = endpointsOf.get(row.tenant);
      if (ofTenant) ofTenant.push(endpoint);
      else endpointsOf.set(row.tenant, [endpoint]);
    }
    return endpointsOf;
  }

  async messageGet(params: MessageGetParams): Promise<Message | null> {
    if (!isJobId(params.id)) return null;
    const [row] = await this.runner.run(this.stmt('messageGet'), [params.id]);
    return row ? messageFromRow(row) : null;
  }

  async messageList(params: MessageListParams): Promise<Message[]> {
    const page = [afterOf(params.after), clampLimit(params.limit), params.type ?? null];
    const rows =
      params.tenant === undefined
        ? await this.runner.run(this.stmt('messageList'), page)
        : await this.runner.run(this.stmt('messageList.tenant'), [...page, params.tenant]);
    return rows.map((row) => messageFromRow(row));
  }

  async deliveryList(params: DeliveryListParams): Promise<Delivery[]> {
    const byEndpoint = params.endpointId !== undefined;
    const id = byEndpoint ? params.endpointId : params.messageId;
    if (!isJobId(String(id))) return [];
    const values = [afterOf(params.after), clampLimit(params.limit), params.status ?? null, id];
    const rows = await this.runner.run(this.stmt(byEndpoint ? 'deliveryList.endpoint' : 'deliveryList.message'), values);
    return rows.map(deliveryFromRow);
  }

  async deliveryStartMany(params: DeliveryStartManyParams): Promise<Array<DeliveryStart | null>> {
    const ids = params.deliveryIds.filter(isJobId);
    // Most deliveries find their endpoint's breaker closed and no rate to count: one read
    // answers the batch, with no transaction and no lock on the health rows, which every
    // delivery to an endpoint would otherwise queue on. The rest, each again, locked.
    const rows = ids.length === 0 ? [] : await this.runner.run(this.stmt('deliveryStart.read'), [ids, params.now ?? null]);
    const byId = new Map(rows.map((row) => [String(row.id), row]));
    const results: Array<DeliveryStart | null> = [];
    for (const [index, id] of params.deliveryIds.entries()) {
      const jobId = params.jobIds?.[index];
      const row = isJobId(id) ? byId.get(String(id)) : undefined;
      if (!row) {
        results.push(null);
        continue;
      }
      const delivery = deliveryFromRow(row);
      const message = messageFromRow(prefixed(row, 'm_'), true);
      const handedOn = isHandedToAnotherJob(row.job_id, jobId);
      if (row.e_id === null || row.h_endpoint_id === null) {
        results.push({ delivery, message, endpoint: null, secrets: [], admission: handedOn ? null : { kind: 'send' }, isFailing: false });
        continue;
      }
      const endpointRow = prefixed(row, 'e_');
      const endpoint = endpointFromRow(endpointRow);
      if (handedOn || (endpoint.rateLimit === null && row.h_breaker_state === 'closed')) {
        const nowMs = (row.start_now as Date).getTime();
        const admission = handedOn ? null : admitAtEndpoint(breakerFromRow(prefixed(row, 'h_')), null, [], nowMs, params.breaker);
        results.push({ delivery, message, endpoint, secrets: secretsInForce(endpointRow, nowMs), admission, isFailing: row.h_failing_since !== null });
        continue;
      }
      // In order, so of two deliveries to one half-open endpoint the first takes the probe.
      results.push(await this.runner.atomic((runner) => this.deliveryStartLocked(runner, id, jobId, params)));
    }
    return results;
  }

  /** One delivery's start with its endpoint's health row locked: a probe to record, or a rate to count. */
  private async deliveryStartLocked(runner: QueryRunner, deliveryId: string, jobId: string | undefined, params: DeliveryStartManyParams): Promise<DeliveryStart | null> {
    const now = await this.clock(runner, params.now);
    const [deliveryRow] = await runner.run(this.stmt('deliveryGet'), [deliveryId]);
    if (!deliveryRow) return null;
    const [messageRow] = await runner.run(this.stmt('messageGet'), [deliveryRow.message_id]);
    const message = messageFromRow(messageRow!, true);
    const [endpointRow] = await runner.run(this.stmt('endpointSigning'), [deliveryRow.endpoint_id]);
    const [healthRow] = await runner.run(this.stmt('endpointHealth.row'), [deliveryRow.endpoint_id]);
    const handedOn = isHandedToAnotherJob(deliveryRow.job_id, jobId);
    if (!endpointRow || !healthRow) {
      return { delivery: deliveryFromRow(deliveryRow), message, endpoint: null, secrets: [], admission: handedOn ? null : { kind: 'send' }, isFailing: false };
    }
    const endpoint = endpointFromRow(endpointRow);
    if (handedOn) {
      // Handed on since the unlocked look: nothing taken.
      return { delivery: deliveryFromRow(deliveryRow), message, endpoint, secrets: secretsInForce(endpointRow, now.getTime()), admission: null, isFailing: healthRow.failing_since !== null };
    }
    let starts: number[] = [];
    if (endpoint.rateLimit) {
      // The health row's lock (above) serialises this count and insert per endpoint.
      await runner.run(this.stmt('endpointRate.prune'), [ENDPOINT_RATE_TYPE, endpoint.id, new Date(now.getTime() - endpoint.rateLimit.intervalMs)]);
      starts = (await runner.run(this.stmt('endpointRate.starts'), [ENDPOINT_RATE_TYPE, endpoint.id])).map((row) => timeOf(row.started_at).getTime());
    }
    const admission = admitAtEndpoint(breakerFromRow(healthRow), endpoint.rateLimit, starts, now.getTime(), params.breaker);
    if (admission.kind === 'probe') {
      await this.writeHealth(runner, [{ endpointId: String(deliveryRow.endpoint_id), breaker: admission.row, counters: countersFromRow(healthRow) }]);
    }
    if (endpoint.rateLimit && admission.kind !== 'wait') await runner.run(this.stmt('endpointRate.start'), [ENDPOINT_RATE_TYPE, endpoint.id, now]);
    return {
      delivery: deliveryFromRow(deliveryRow),
      message,
      endpoint,
      secrets: secretsInForce(endpointRow, now.getTime()),
      admission,
      isFailing: healthRow.failing_since !== null,
    };
  }

  async deliveryRecordMany(params: DeliveryRecordManyParams): Promise<DeliveryRecordResult[]> {
    if (params.records.length === 0) return [];
    // A delivery's last record sets its status, as applying them in order would (an UPDATE
    // from a join takes one arbitrary match per row); in id order, so two batches lock
    // their delivery rows in one order.
    const statusById = new Map(params.records.map((record) => [record.deliveryId, record.status]));
    const deliveryIds = [...statusById.keys()].sort(compareJobIds);
    const statuses = deliveryIds.map((id) => statusById.get(id)!);
    const endpointIds = endpointsWithAttempts(params.records);
    if (endpointIds.length === 0) {
      // Nothing was sent (skipped deliveries): statuses only, no health row to lock or read,
      // so one autocommitted statement, not a transaction.
      await this.runner.run(this.stmt('deliveryRecord'), [deliveryIds, statuses, params.now ?? null, endpointIds]);
      return params.records.map(() => ({ disabledReason: null }));
    }
    // Built inside: a deadlock retry runs the whole callback again, and must not keep a
    // disable the rolled-back try reported.
    return this.runner.atomic(async (runner) => {
      const results: DeliveryRecordResult[] = params.records.map(() => ({ disabledReason: null }));
      const healthRows = await runner.run(this.stmt('deliveryRecord'), [
        deliveryIds,
        statuses,
        params.now ?? null,
        endpointIds,
      ]);
      if (healthRows.length === 0) return results;
      const now: Date = healthRows[0]!.record_now;
      const after = healthRows.map((row) => healthAfterAttempts(row, String(row.endpoint_id), params, now.getTime()));
      await this.writeHealth(runner, after);
      for (const { endpointId, disable } of after) {
        if (disable === null) continue;
        const disabled = await runner.run(this.stmt('endpointDisableIfEnabled'), [endpointId, disable.reason, now]);
        if (disabled.length > 0) results[disable.recordIndex] = { disabledReason: disable.reason };
      }
      return results;
    });
  }

  async deliveryRecover(params: DeliveryRecoverParams): Promise<string[]> {
    if (!isJobId(params.endpointId)) return [];
    return this.runner.atomic(async (runner) => {
      const now = await this.clock(runner, params.now);
      const rows = await runner.run(this.stmt('deliveryRecoverable'), [params.endpointId, params.since]);
      const plan = planRecovery(rows);
      const replayedJobIds = new Set(await this.replayIn(runner, plan.toReplay.map((row) => String(row.job_id)), { ...recoveryReplay(params.since, params.job), now }));
      const recovered = recoveredAfter(plan, replayedJobIds);
      for (const row of plan.toCreate) {
        await this.createDeliverJobs(runner, [{ deliveryId: String(row.id), endpointId: params.endpointId, messageId: String(row.message_id), job: params.job }], now);
      }
      return recovered;
    });
  }

  // ---- internals ----

  /**
   * Locks an endpoint's health row before a call that writes both it and the endpoint's
   * row. deliveryRecordMany takes them in that order (the health rows, then an endpoint it
   * disables); an enable, a new URL or a removal that locked the endpoint first could wait
   * on a batch of records that waits on it, and PostgreSQL would end one as a deadlock.
   */
  private async lockHealthFirst(runner: QueryRunner, endpointId: string): Promise<void> {
    await runner.run(this.stmt('endpointHealth.row'), [endpointId]);
  }

  /** The store's now for a call of several statements (or the pinned one). */
  private async clock(runner: QueryRunner, now: Date | undefined): Promise<Date> {
    const [row] = (await runner.run(this.stmt('claimClock'), [now ?? null])) as [{ now: Date }];
    return row.now;
  }

  private async deliveriesOf(runner: QueryRunner, messageId: string): Promise<Delivery[]> {
    return (await runner.run(this.stmt('deliveryList.message'), ['0', null, null, messageId])).map(deliveryFromRow);
  }

  /** One deliver job per delivery, keyed for the limits by its endpoint, linked back to it. */
  /** The deliveries' deliver jobs, linked to them; the jobs' ids, in the deliveries' order. */
  private async createDeliverJobs(runner: QueryRunner, deliveries: readonly DeliverJobToCreate[], now: Date): Promise<string[]> {
    if (deliveries.length === 0) return [];
    const inserts = deliveries.map(({ deliveryId, endpointId, messageId, job }) => ({ ...job, payloadJson: deliverPayloadJson(deliveryId, messageId, endpointId), limitKey: endpointId }));
    const jobs = await this.insertJobs(runner, inserts, now, null);
    const jobIds = jobs.map((inserted) => inserted.job.id);
    await runner.run(this.stmt('deliverySetJob'), [deliveries.map((delivery) => delivery.deliveryId), jobIds, now]);
    return jobIds;
  }

  /** Endpoints' health rows after attempts (or a probe taken), in one statement. */
  private async writeHealth(runner: QueryRunner, rows: ReadonlyArray<Pick<HealthAfterAttempts, 'endpointId' | 'breaker' | 'counters'>>): Promise<void> {
    const at = (ms: number | null) => (ms === null ? null : new Date(ms));
    await runner.run(this.stmt('endpointHealth.write'), [
      rows.map((row) => row.endpointId),
      rows.map((row) => row.breaker.state),
      rows.map((row) => at(row.breaker.openedAt)),
      rows.map((row) => row.breaker.openMs),
      rows.map((row) => at(row.breaker.probeUntil)),
      rows.map((row) => at(row.breaker.windowStartedAt)),
      rows.map((row) => row.breaker.windowSuccesses),
      rows.map((row) => row.breaker.windowFailures),
      rows.map((row) => row.counters.successes),
      rows.map((row) => row.counters.failures),
      rows.map((row) => at(row.counters.lastSuccessAt)),
      rows.map((row) => at(row.counters.lastFailureAt)),
      rows.map((row) => at(row.counters.failingSince)),
    ]);
  }
}

/** A delivery that waits for its deliver job, and the publish's (or recover's) job options. */
interface DeliverJobToCreate {
  readonly deliveryId: string;
  readonly endpointId: string;
  readonly messageId: string;
  readonly job: JobInsert;
}

function jsonOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

function afterOf(after: string | undefined): string {
  return after !== undefined && isJobId(String(after)) ? String(after) : '0';
}

/** The columns of one joined table in a row (`m_id` -> `id` for prefix `m_`), for its row mapper. */
function prefixed(row: Row, prefix: string): Row {
  const out: Row = {};
  for (const key of Object.keys(row)) if (key.startsWith(prefix)) out[key.slice(prefix.length)] = row[key];
  return out;
}

/** What a publish reads of an endpoint to choose its deliveries. */
interface PublishEndpoint {
  readonly id: string;
  readonly enabled: boolean;
  readonly eventTypes: Parameters<typeof endpointReceives>[0];
}

/** A delivery a publish makes: its message (list[index]), endpoint and first status. */
interface PlannedDelivery {
  readonly index: number;
  readonly endpointId: string;
  readonly status: 'pending' | 'skipped';
}

/**
 * The deliveries of some publishes, in order: each message's, in endpoint id order, one
 * per endpoint of its tenant whose event types take it; pending, or skipped when the
 * endpoint is disabled.
 */
function planDeliveries(list: readonly MessagePublishParams[], endpointsOf: ReadonlyMap<string, readonly PublishEndpoint[]>): PlannedDelivery[] {
  const planned: PlannedDelivery[] = [];
  list.forEach((params, index) => {
    for (const endpoint of endpointsOf.get(params.tenant) ?? []) {
      if (!endpointReceives(endpoint.eventTypes, params.type)) continue;
      planned.push({ index, endpointId: endpoint.id, status: endpoint.enabled ? 'pending' : 'skipped' });
    }
  });
  return planned;
}

/**
 * Each publish's answer from what was written: list[i] made messages[i], planned[k] made
 * the delivery written[k] (its id and its job's). A delivery just written has no attempt
 * yet, as mailroom_delivery_state would read it.
 */
function publishAnswers(
  list: readonly MessagePublishParams[],
  messages: readonly Row[],
  planned: readonly PlannedDelivery[],
  written: ReadonlyArray<{ id: string; jobId: string | null }>,
  now: Date,
): MessagePublishResult[] {
  const deliveriesOf: Delivery[][] = list.map(() => []);
  planned.forEach((row, k) => {
    const { tenant, type } = list[row.index]!;
    const delivery = { id: written[k]!.id, message_id: messages[row.index]!.id, endpoint_id: row.endpointId, status: row.status, tenant, type, job_id: written[k]!.jobId, attempts: 0, last_error: null, created_at: now, updated_at: now };
    deliveriesOf[row.index]!.push(deliveryFromRow(delivery));
  });
  return messages.map((row, index) => ({ message: messageFromRow(row), deliveries: deliveriesOf[index]!, isDuplicate: false }));
}
