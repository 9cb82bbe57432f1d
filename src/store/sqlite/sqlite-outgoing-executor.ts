// The outgoing-webhook Store methods for SQLite (outgoing-store.ts), each one transaction
// on the write engine. SqliteExecutor extends this class, so the store, and the caller's
// own transaction (transactionSync), have them. Semantics mirror
// postgres/postgres-outgoing-executor.ts; statements are in sql/endpoint.sql and sql/message.sql.

import type { BreakerRow } from '../../core/circuit-breaker.js';
import { ENDPOINT_RATE_TYPE, admitAtEndpoint, isHandedToAnotherJob } from '../delivery-admission.js';
import { endpointsWithAttempts, healthAfterAttempts } from '../delivery-health.js';
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
import type { HealthCounters } from '../outgoing-rows.js';
import { clampLimit } from '../rows.js';
import type { Row } from '../rows.js';
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
import { nowMs } from './write-engine.js';
import type { SqliteWriteEngine } from './write-engine.js';

const DECIMAL_ID = /^[0-9]{1,19}$/;
/** deliveryStartMany's read found it must write (a breaker not closed, a rate to count). */
const NEEDS_WRITE = Symbol('needs a write');

/** What a delivery's start reads of its endpoint. */
interface EndpointAtStart {
  readonly endpoint: Endpoint;
  readonly secrets: string[];
  readonly healthRow: Row;
}

/** What one read-only pass of deliveryStartMany has read so far, by endpoint and message id. */
interface ReadAtStart {
  readonly endpoints: Map<unknown, EndpointAtStart | null>;
  readonly messages: Map<unknown, Message<string>>;
}

/** `read()`, once per key of `seen` (null is a value kept too); every time without `seen`. */
function readOnce<T>(seen: Map<unknown, T> | undefined, key: unknown, read: () => T): T {
  if (seen?.has(key)) return seen.get(key)!;
  const value = read();
  seen?.set(key, value);
  return value;
}

export abstract class SqliteOutgoingExecutor implements OutgoingExecutor {
  protected abstract readonly engine: SqliteWriteEngine<any>;
  protected abstract insertJobsSync(jobs: readonly JobInsert[], now: Date | undefined, event: null): JobInsertResult[];
  protected abstract replaySync(params: JobReplayParams): string[];

  async endpointAdd(params: EndpointAddParams): Promise<Endpoint> {
    return this.engine.write('ack', () => {
      const row = this.engine.stmt('endpointAdd').get({
        tenant: params.tenant,
        url: params.url,
        description: params.description,
        eventTypes: jsonOrNull(params.eventTypes),
        rateLimit: jsonOrNull(params.rateLimit),
        metadata: jsonOrNull(params.metadata),
        secret: params.secret,
        now: nowMs(params.now),
        addedBy: params.addedBy,
      }) as Row;
      this.engine.stmt('endpointAdd.health').run({ id: row.id });
      return endpointFromRow(row);
    });
  }

  async endpointGet(params: EndpointGetParams): Promise<Endpoint | null> {
    if (!DECIMAL_ID.test(String(params.id))) return null;
    return this.engine.read(() => {
      const row = this.engine.stmt('endpointGet').get({ id: params.id }) as Row | undefined;
      return row ? endpointFromRow(row) : null;
    });
  }

  async endpointList(params: EndpointListParams): Promise<Endpoint[]> {
    return this.engine.read(() => {
      const page = { after: afterOf(params.after), limit: clampLimit(params.limit) };
      const rows = (params.tenant === undefined
        ? this.engine.stmt('endpointList').all(page)
        : this.engine.stmt('endpointList.tenant').all({ ...page, tenant: params.tenant })) as Row[];
      return rows.map(endpointFromRow);
    });
  }

  async endpointStats(params: EndpointStatsParams): Promise<EndpointStatsResult> {
    return this.engine.read(() =>
      endpointStatsFromRows(
        this.engine.stmt('endpointStats.counts').all() as Row[],
        this.engine.stmt('endpointStats.backlog').all({ topN: Math.max(0, Math.floor(params.topN)) }) as Row[],
        (this.engine.stmt('endpointStats.totalBacklog').get() as Row).backlog,
      ),
    );
  }

  async endpointUpdate(params: EndpointUpdateParams): Promise<Endpoint | null> {
    if (!DECIMAL_ID.test(String(params.id))) return null;
    return this.engine.write('ack', () => {
      const current = this.engine.stmt('endpointUpdate.current').get({ id: params.id }) as Row | undefined;
      if (!current) return null;
      const row = this.engine.stmt('endpointUpdate').get({
        id: params.id,
        url: params.url ?? current.url,
        description: params.description !== undefined ? params.description : current.description,
        eventTypes: params.eventTypes !== undefined ? jsonOrNull(params.eventTypes) : current.event_types,
        rateLimit: params.rateLimit !== undefined ? jsonOrNull(params.rateLimit) : current.rate_limit,
        metadata: params.metadata !== undefined ? jsonOrNull(params.metadata) : current.metadata,
        now: nowMs(params.now),
      }) as Row;
      if (params.url !== undefined && params.url !== current.url) this.engine.stmt('endpointHealth.fresh').run({ id: params.id });
      return endpointFromRow(row);
    });
  }

  async endpointSetEnabled(params: EndpointSetEnabledParams): Promise<Endpoint | null> {
    if (!DECIMAL_ID.test(String(params.id))) return null;
    const by = params.by ?? 'operator';
    return this.engine.write('ack', () => {
      const before = this.engine.stmt('endpointSetEnabled.before').get({ id: params.id }) as Row | undefined;
      const row = this.engine.stmt('endpointSetEnabled').get({
        id: params.id,
        enabled: params.enabled ? 1 : 0,
        reason: params.enabled ? null : params.reason,
        disabledBy: params.enabled ? null : by,
        asTenant: by === 'tenant' ? 1 : 0,
        keepReason: params.keepReason === true ? 1 : 0,
        now: nowMs(params.now),
      }) as Row | undefined;
      if (row && params.enabled && before?.enabled === 0) this.engine.stmt('endpointHealth.fresh').run({ id: params.id });
      return row ? endpointFromRow(row) : null;
    });
  }

  async endpointRemove(params: EndpointGetParams): Promise<boolean> {
    if (!DECIMAL_ID.test(String(params.id))) return false;
    return this.engine.write('ack', () => {
      const removed = this.engine.stmt('endpointRemove').get({ id: params.id }) !== undefined;
      this.engine.stmt('endpointRemove.health').run({ id: params.id });
      return removed;
    });
  }

  async endpointRotateSecret(params: EndpointRotateSecretParams): Promise<EndpointRotateSecretResult | null> {
    if (!DECIMAL_ID.test(String(params.id))) return null;
    return this.engine.write('ack', () => {
      const now = nowMs(params.now);
      const row = this.engine.stmt('endpointRotateSecret.overlap').get({ id: params.id }) as Row | undefined;
      if (!row) return null;
      const rotation = rotationOf(row, now, params.overlapMs);
      if (rotation.rotated) this.engine.stmt('endpointRotateSecret').run({ id: params.id, secret: params.secret, until: now + params.overlapMs, now });
      return rotation;
    });
  }

  async endpointHealth(params: EndpointHealthParams): Promise<EndpointHealth | null> {
    if (!DECIMAL_ID.test(String(params.id))) return null;
    return this.engine.read(() => {
      const row = this.engine.stmt('endpointHealth').get({ id: params.id }) as Row | undefined;
      return row ? healthFromRow(row, params.breaker) : null;
    });
  }

  async messagePublish(params: MessagePublishParams): Promise<MessagePublishResult> {
    // An acknowledgement: concurrent publishes share one commit (and its fsync), each in its
    // own savepoint, so one caller's key conflict rolls back only its own message.
    return this.engine.ackWrite(() => this.messagePublishSync(params));
  }

  /** messagePublish inside a transaction already open (the store's, or the caller's). */
  protected messagePublishSync(params: MessagePublishParams): MessagePublishResult {
    const now = nowMs(params.now);
    const inserted = this.engine.stmt('messageInsert').get({ tenant: params.tenant, type: params.type, payload: params.payloadJson, key: params.key, now }) as Row | undefined;
    if (!inserted) {
      const existing = this.engine.stmt('messageByKey').get({ tenant: params.tenant, key: params.key }) as Row;
      if (existing.type !== params.type || !sameJson(existing.payload, params.payloadJson)) {
        throw new MessageKeyConflictError(params.key!, String(existing.id));
      }
      const deliveries = (this.engine.stmt('deliveryList.message').all({ messageId: existing.id, after: 0, status: null, limit: -1 }) as Row[]).map(deliveryFromRow);
      return { message: messageFromRow(existing), deliveries, isDuplicate: true };
    }
    const endpoints = (this.engine.stmt('endpointsOfTenant').all({ tenant: params.tenant }) as Row[]).filter((row) =>
      endpointReceives(JSON.parse(row.event_types ?? 'null'), params.type),
    );
    const messageId = String(inserted.id);
    const toSend: Array<{ deliveryId: string; endpointId: string }> = [];
    for (const endpoint of endpoints) {
      const status = endpoint.enabled === 1 ? 'pending' : 'skipped';
      const delivery = this.engine.stmt('deliveryInsert').get({ messageId, endpointId: endpoint.id, status, now }) as Row;
      if (status === 'pending') toSend.push({ deliveryId: String(delivery.id), endpointId: String(endpoint.id) });
    }
    this.createDeliverJobs(toSend, messageId, params.job, params.now, now);
    const deliveries = (this.engine.stmt('deliveryList.message').all({ messageId, after: 0, status: null, limit: -1 }) as Row[]).map(deliveryFromRow);
    return { message: messageFromRow(inserted), deliveries, isDuplicate: false };
  }

  async messageGet(params: MessageGetParams): Promise<Message | null> {
    if (!DECIMAL_ID.test(String(params.id))) return null;
    return this.engine.read(() => {
      const row = this.engine.stmt('messageGet').get({ id: params.id }) as Row | undefined;
      return row ? messageFromRow(row) : null;
    });
  }

  async messageList(params: MessageListParams): Promise<Message[]> {
    return this.engine.read(() => {
      const page = { after: afterOf(params.after), limit: clampLimit(params.limit), type: params.type ?? null };
      const rows = (params.tenant === undefined
        ? this.engine.stmt('messageList').all(page)
        : this.engine.stmt('messageList.tenant').all({ ...page, tenant: params.tenant })) as Row[];
      return rows.map((row) => messageFromRow(row));
    });
  }

  async deliveryList(params: DeliveryListParams): Promise<Delivery[]> {
    const byEndpoint = params.endpointId !== undefined;
    const id = byEndpoint ? params.endpointId : params.messageId;
    if (!DECIMAL_ID.test(String(id))) return [];
    return this.engine.read(() => {
      const page = { after: afterOf(params.after), limit: clampLimit(params.limit), status: params.status ?? null };
      const rows = (byEndpoint
        ? this.engine.stmt('deliveryList.endpoint').all({ ...page, endpointId: id })
        : this.engine.stmt('deliveryList.message').all({ ...page, messageId: id })) as Row[];
      return rows.map(deliveryFromRow);
    });
  }

  async deliveryStartMany(params: DeliveryStartManyParams): Promise<Array<DeliveryStart | null>> {
    // Most deliveries find their endpoint's breaker closed and no rate to count: one read
    // transaction answers the batch without a commit. Those that must write (a probe to
    // take, a rate to count) are read again, in order, in one write transaction.
    const results = await this.engine.read(() => {
      const seen: ReadAtStart = { endpoints: new Map(), messages: new Map() };
      return params.deliveryIds.map((id, index) => this.deliveryStartSync(id, params.jobIds?.[index], params, false, seen));
    });
    const toWrite = results.flatMap((result, index) => (result === NEEDS_WRITE ? [index] : []));
    if (toWrite.length > 0) {
      const written = await this.engine.write('bookkeeping', () => toWrite.map((index) => this.deliveryStartSync(params.deliveryIds[index]!, params.jobIds?.[index], params, true)));
      toWrite.forEach((index, k) => (results[index] = written[k]!));
    }
    return results as Array<DeliveryStart | null>;
  }

  /**
   * One delivery's start; without `canWrite`, NEEDS_WRITE where it would have to write.
   * `seen` holds what a read-only pass already read of each endpoint and message: one
   * snapshot answers for all of a claim's deliveries to an endpoint, or of a message,
   * where reading them again per delivery was a third of the start. (A claim's
   * deliveries go to the one, two or three endpoints with room, and a message's
   * deliveries to several endpoints have neighbouring ids, so often share a claim.)
   */
  private deliveryStartSync(
    deliveryId: string,
    jobId: string | undefined,
    params: DeliveryStartManyParams,
    canWrite: boolean,
    seen?: ReadAtStart,
  ): DeliveryStart | null | typeof NEEDS_WRITE {
    if (!DECIMAL_ID.test(String(deliveryId))) return null;
    const now = nowMs(params.now);
    const deliveryRow = this.engine.stmt('deliveryGet').get({ id: deliveryId }) as Row | undefined;
    if (!deliveryRow) return null;
    const message = readOnce(seen?.messages, deliveryRow.message_id, () => messageFromRow(this.engine.stmt('messageGet').get({ id: deliveryRow.message_id }) as Row, true));
    const atStart = readOnce(seen?.endpoints, deliveryRow.endpoint_id, () => this.endpointAtStart(deliveryRow.endpoint_id, now));
    const handedOn = isHandedToAnotherJob(deliveryRow.job_id, jobId);
    if (!atStart) {
      return { delivery: deliveryFromRow(deliveryRow), message, endpoint: null, secrets: [], admission: handedOn ? null : { kind: 'send' }, isFailing: false };
    }
    const { endpoint, secrets, healthRow } = atStart;
    if (handedOn) {
      return { delivery: deliveryFromRow(deliveryRow), message, endpoint, secrets, admission: null, isFailing: healthRow.failing_since !== null };
    }
    if (!canWrite && (endpoint.rateLimit !== null || healthRow.breaker_state !== 'closed')) return NEEDS_WRITE;
    const rateKey = { type: ENDPOINT_RATE_TYPE, id: String(endpoint.id) };
    let starts: number[] = [];
    if (endpoint.rateLimit) {
      this.engine.stmt('endpointRate.prune').run({ ...rateKey, since: now - endpoint.rateLimit.intervalMs });
      starts = (this.engine.stmt('endpointRate.starts').all(rateKey) as Row[]).map((row) => Number(row.started_at));
    }
    const admission = admitAtEndpoint(breakerFromRow(healthRow), endpoint.rateLimit, starts, now, params.breaker);
    if (admission.kind === 'probe') this.writeHealth(deliveryRow.endpoint_id, admission.row, countersFromRow(healthRow));
    if (endpoint.rateLimit && admission.kind !== 'wait') this.engine.stmt('endpointRate.start').run({ ...rateKey, now });
    return { delivery: deliveryFromRow(deliveryRow), message, endpoint, secrets, admission, isFailing: healthRow.failing_since !== null };
  }

  /** An endpoint as a delivery's start needs it, with its health row; null once removed. */
  private endpointAtStart(endpointId: unknown, now: number): EndpointAtStart | null {
    const endpointRow = this.engine.stmt('endpointSigning').get({ id: endpointId }) as Row | undefined;
    const healthRow = this.engine.stmt('endpointHealth.row').get({ id: endpointId }) as Row | undefined;
    if (!endpointRow || !healthRow) return null;
    return { endpoint: endpointFromRow(endpointRow), secrets: secretsInForce(endpointRow, now), healthRow };
  }

  async deliveryRecordMany(params: DeliveryRecordManyParams): Promise<DeliveryRecordResult[]> {
    return this.engine.write('bookkeeping', () => this.recordSync(params));
  }

  /** deliveryRecordMany's body, inside a write transaction already open. */
  private recordSync(params: DeliveryRecordManyParams): DeliveryRecordResult[] {
    const now = nowMs(params.now);
    for (const record of params.records) this.engine.stmt('deliveryRecord').run({ id: record.deliveryId, status: record.status, now });
    return this.foldHealthSync(params, now);
  }

  /**
   * Successes written with their jobs' done (JobFinish `delivered`), inside the finish's
   * write: a delivery not yet delivered becomes so and counts for its endpoint; one that is
   * already (the same success written again) counts nothing more.
   */
  protected recordDeliveredSync(params: DeliveryRecordManyParams): void {
    const now = nowMs(params.now);
    const records = params.records.filter((record) => this.engine.stmt('deliveryRecord.delivered').get({ id: record.deliveryId, now }) !== undefined);
    this.foldHealthSync({ ...params, records }, now);
  }

  /** The batch's attempts folded into their endpoints' health rows, and the disables they call for. */
  private foldHealthSync(params: DeliveryRecordManyParams, now: number): DeliveryRecordResult[] {
    const results: DeliveryRecordResult[] = params.records.map(() => ({ disabledReason: null }));
    for (const endpointId of endpointsWithAttempts(params.records)) {
      const healthRow = this.engine.stmt('endpointHealth.row').get({ id: endpointId }) as Row | undefined;
      if (!healthRow) continue; // the endpoint was removed
      const after = healthAfterAttempts(healthRow, endpointId, params, now);
      this.writeHealth(endpointId, after.breaker, after.counters);
      const { disable } = after;
      if (disable && this.engine.stmt('endpointDisableIfEnabled').get({ id: endpointId, reason: disable.reason, now }) !== undefined) {
        results[disable.recordIndex] = { disabledReason: disable.reason };
      }
    }
    return results;
  }

  async deliveryRecover(params: DeliveryRecoverParams): Promise<string[]> {
    if (!DECIMAL_ID.test(String(params.endpointId))) return [];
    return this.engine.write('ack', () => {
      const now = nowMs(params.now);
      const rows = this.engine.stmt('deliveryRecoverable').all({ endpointId: params.endpointId, since: params.since.getTime() }) as Row[];
      const plan = planRecovery(rows);
      const replayedJobIds = new Set(this.replaySync({ ids: plan.toReplay.map((row) => String(row.job_id)), ...recoveryReplay(params.since, params.job), now: params.now }));
      const recovered = recoveredAfter(plan, replayedJobIds);
      for (const row of plan.toCreate) {
        this.createDeliverJobs([{ deliveryId: String(row.id), endpointId: params.endpointId }], String(row.message_id), params.job, params.now, now);
      }
      return recovered;
    });
  }

  // ---- internals ----

  /** One deliver job per delivery, keyed for the limits by its endpoint, linked back to it. */
  private createDeliverJobs(
    deliveries: ReadonlyArray<{ deliveryId: string; endpointId: string }>,
    messageId: string,
    job: JobInsert,
    nowParam: Date | undefined,
    now: number,
  ): void {
    if (deliveries.length === 0) return;
    const inserts = deliveries.map(({ deliveryId, endpointId }) => ({ ...job, payloadJson: deliverPayloadJson(deliveryId, messageId, endpointId), limitKey: endpointId }));
    const jobs = this.insertJobsSync(inserts, nowParam, null);
    deliveries.forEach(({ deliveryId }, index) => this.engine.stmt('deliverySetJob').run({ id: deliveryId, jobId: jobs[index]!.job.id, now }));
  }

  private writeHealth(endpointId: unknown, breaker: BreakerRow, counters: HealthCounters): void {
    this.engine.stmt('endpointHealth.write').run({
      id: endpointId,
      state: breaker.state,
      openedAt: breaker.openedAt,
      openMs: breaker.openMs,
      probeUntil: breaker.probeUntil,
      windowStartedAt: breaker.windowStartedAt,
      windowSuccesses: breaker.windowSuccesses,
      windowFailures: breaker.windowFailures,
      successes: counters.successes,
      failures: counters.failures,
      lastSuccessAt: counters.lastSuccessAt,
      lastFailureAt: counters.lastFailureAt,
      failingSince: counters.failingSince,
    });
  }
}

function jsonOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : JSON.stringify(value);
}

function afterOf(after: string | undefined): number {
  return after !== undefined && DECIMAL_ID.test(String(after)) ? Number(after) : 0;
}

