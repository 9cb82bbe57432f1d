// The built-in `deliver` task (SPEC §6a): one attempt to deliver one message to one
// endpoint. The store says what to send, where, with which secrets, and whether the
// endpoint's breaker lets it go (deliveryStartMany); the request is signed per Standard
// Webhooks (webhook-id = the message id, stable across retries and endpoints; timestamp
// and signatures fresh per attempt), sent through the SSRF guard with bounded time and
// reading, classified, and recorded with the endpoint's health: where store calls are
// round trips, a healthy endpoint's success with the job's `done` (the worker's finish),
// anything else by deliveryRecordMany before the job's outcome. The starts of a claim's
// deliveries share one store call, and so do the records of one turn.
// While the breaker is open the job waits uncharged (Snooze) instead of failing.

import type { WaitReason } from '../../core/circuit-breaker.js';
import { Permanent, RetryAfter, Snooze, UrlBlockedError } from '../../core/errors.js';
import type { MailroomError } from '../../core/errors.js';
import { DELIVERED_WITH_DONE } from '../../core/task-registry.js';
import type { TaskDefinition, WorkerTaskContext } from '../../core/task-registry.js';
import type { DeliveryStatus, EndpointAddedBy } from '../../core/outgoing-types.js';
import type { Logger } from '../../log.js';
import { GONE_REASON } from '../../core/disable-reasons.js';
import type { StoreExecutor } from '../../store/store.js';
import { traceHttpCall } from '../../tracing.js';
import type { DeliveryRecord, DeliveryRecordResult, DeliveryStart } from '../../store/outgoing-store.js';
import { isHandedToAnotherJob } from '../../store/delivery-admission.js';
import { classifyResponse } from '../classify-response.js';
import { excerptOf } from '../response-excerpt.js';
import { guardFor } from './deliver-settings.js';
import type { DeliverSettings } from './deliver-settings.js';
import type { DeliveryAgents, SendOutcome } from './send-delivery.js';
import { turnBatch } from './turn-batch.js';

/** Loads at first use, once; a load that failed is tried again by the next caller, not kept. */
function atFirstUse<T>(load: () => Promise<T>): () => Promise<T> {
  let loading: Promise<T> | undefined;
  return () =>
    (loading ??= load().catch((error: unknown) => {
      loading = undefined;
      throw error;
    }));
}

// What a delivery needs and a plain worker never does loads with the first delivery, not
// with Mailroom: the HTTP client (node:http, node:https and their agents, ~2 MB of a
// process) and the signing code (Standard Webhooks and the provider helpers it shares, a
// dozen modules). One loader, so each delivery waits on one settled promise.
const deliveryModules = atFirstUse(() =>
  Promise.all([import('./send-delivery.js'), import('../../providers/standard-webhooks-scheme.js'), import('../../providers/standard.js')]),
);

/** The job type of deliveries; `mr.publish` enqueues it and every worker runs it. */
export const DELIVER_TASK = 'deliver';

/** Why the deliver task disabled an endpoint: it answered 410, or it failed for too long. */
export type EndpointDisableCause = 'gone' | 'failing';

/** A deliver job's payload (the store writes it at publish). */
export interface DeliverPayload {
  readonly deliveryId: string;
  readonly messageId: string;
  readonly endpointId: string;
}

export interface DeliverTaskDeps {
  readonly store: StoreExecutor;
  readonly settings: DeliverSettings;
  readonly log: Logger;
  /**
   * Hand a healthy endpoint's success to the worker, to be written with the job's `done`
   * (JobFinish `delivered`), where the store's calls are round trips: one call fewer a
   * turn, and the slot free one round trip sooner. On SQLite the record is an in-process
   * write either way, and handlers that returned sooner freed their slots one by one, so
   * claims took fewer jobs each (7 against 8.7 at the default concurrency) and a delivery
   * cost more CPU, not less; there it is recorded before the job's outcome.
   */
  readonly successWithDone?: boolean;
  /** Told when an attempt disabled its endpoint: `gone` (410) or `failing` (the streak); the metric. */
  readonly onEndpointDisabled?: (endpointId: string, cause: EndpointDisableCause) => void;
}

/**
 * Snoozes until a breaker reopens are spread by up to this share (at most 5 s), so the
 * deliveries queued behind an open breaker do not all look again in the same instant.
 */
const WAIT_SPREAD_RATIO = 0.1;
/** How a snoozed delivery's history says why it waits. */
const WAIT_WORDS: Record<WaitReason, string> = {
  breaker_open: 'its circuit breaker is open',
  probing: 'its circuit breaker is half-open and a probe is in flight',
  rate_limit: 'its rate limit is used up for now',
};

/**
 * Snoozes allowed per delivery: the breaker decides how long a delivery waits, and
 * auto-disable how long an endpoint may keep failing (5 days of 30-minute waits is ~240).
 */
const DELIVER_MAX_SNOOZES = 100_000;

export function createDeliverTask(deps: DeliverTaskDeps): TaskDefinition<DeliverPayload> {
  const { store, settings, log } = deps;
  // One pool of keep-alive connections per allowlist: a connection the operator's guard let
  // through is never reused for a tenant's endpoint at the same host.
  const agents: Partial<Record<EndpointAddedBy, DeliveryAgents>> = {};
  const now = () => settings.clock?.();
  // The starts of the deliveries a claim starts, and the records of the responses that
  // arrive in one turn, each as one store call.
  const startDelivery = turnBatch('microtasks', (starts: Array<{ deliveryId: string; jobId: string }>) =>
    store.deliveryStartMany({ deliveryIds: starts.map((s) => s.deliveryId), jobIds: starts.map((s) => s.jobId), breaker: settings.breaker, now: now() }),
  );
  const recordDelivery = turnBatch('turn', (records: DeliveryRecord[]) =>
    store.deliveryRecordMany({ records, disableAfterMs: settings.disableAfterMs, breaker: settings.breaker, now: now() }),
  );
  return {
    maxAttempts: settings.maxAttempts,
    retryScheduleMs: settings.retryScheduleMs,
    // The request's own timeouts fire first; this only catches a store that hangs.
    timeoutMs: settings.requestTimeoutMs + 30_000,
    maxSnoozes: DELIVER_MAX_SNOOZES,
    ...(settings.queue !== undefined ? { queue: settings.queue } : {}),
    limits: {
      key: (payload) => payload.endpointId,
      perKey: { concurrency: settings.concurrency, ...(settings.rate ? { rate: settings.rate } : {}) },
    },
    async run(payload, ctx) {
      const start = await startDelivery({ deliveryId: payload.deliveryId, jobId: ctx.job.id });
      if (!start) return { skipped: 'the delivery no longer exists' };
      // recover() gave the delivery a new job while this one was finishing: that job sends it
      // and records its outcome. This one, replayed since, would send it twice and could
      // write `failed` over the other's `delivered`. Nothing is sent or recorded, and the
      // start took nothing from the endpoint (no probe, no rate slot). The job id is
      // compared here too, so no store that missed it can make this job send.
      if (start.admission === null || isHandedToAnotherJob(start.delivery.jobId, ctx.job.id)) {
        return { skipped: `the delivery was handed to job ${start.delivery.jobId}` };
      }
      const record = (fields: AttemptFields) => recordAttempt(deps, recordDelivery, start, fields, ctx.job.id);
      if (!start.endpoint || !start.endpoint.enabled) {
        await record({ status: 'skipped', attempt: null });
        return { skipped: start.endpoint ? `endpoint disabled: ${start.endpoint.disabledReason ?? 'by hand'}` : 'endpoint removed' };
      }
      if (start.admission.kind === 'wait') {
        const { waitMs, reason } = start.admission;
        ctx.setDetails({ wait: reason, waitMs });
        throw new Snooze(waitMs + Math.random() * Math.min(waitMs * WAIT_SPREAD_RATIO, 5_000), `endpoint ${start.endpoint.id}: ${WAIT_WORDS[reason]}`);
      }
      const url = new URL(start.endpoint.url);
      const { addedBy } = start.endpoint;
      const guard = guardFor(settings, addedBy);
      const failed = (): DeliveryStatus => (ctx.attempt >= ctx.job.maxAttempts ? 'failed' : 'pending');
      try {
        guard.checkLiteral(url);
      } catch (error) {
        return refuse(error as MailroomError);
      }
      const body = envelope(start);
      const [{ createDeliveryAgents, sendDelivery }, { signStandardWebhook }, { standardWebhooksKey }] = await deliveryModules();
      const keys = start.secrets.map((secret) => standardWebhooksKey(secret)).filter((key): key is Buffer => key !== null);
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'user-agent': 'mailroom-deliver',
        ...signStandardWebhook(keys, start.message.id, new Date(), body),
      };
      const outcome = await traceHttpCall(
        'POST',
        url.toString(),
        headers,
        () => {
          const pool = (agents[addedBy] ??= createDeliveryAgents());
          return sendDelivery({ url, body, headers, lookup: guard.lookup, signal: ctx.signal }, settings, pool);
        },
        (sent) => (sent.kind === 'error' ? sent.error : undefined),
      );
      if (outcome.kind === 'error') {
        if (isCode(outcome.error, 'MR_ERR_URL_BLOCKED')) return refuse(outcome.error as MailroomError);
        ctx.setDetails({ durationMs: outcome.durationMs, error: outcome.reason });
        if (ctx.signal.aborted) throw ctx.signal.reason ?? outcome.error;
        await record({ status: failed(), attempt: 'outage' });
        throw new Error(`delivery to endpoint ${start.endpoint.id} failed: ${outcome.reason} (${outcome.error.message})`);
      }
      return settle(outcome);

      /**
       * The SSRF guard refused the endpoint's address: no request went out, and none ever
       * will. The error keeps the tenant's wording, since the portal shows every endpoint of
       * the tenant, the operator's too (one added through the API with a URL the customer
       * gave, whose DNS they control); the operator's wording (the resolved address, the
       * config key) is in the attempt's details, which the dashboard and `mailroom job` show.
       */
      async function refuse(error: MailroomError): Promise<never> {
        const toTenant = error instanceof UrlBlockedError;
        ctx.setDetails({ error: 'url_blocked', ...(toTenant ? { refusal: error.message } : {}) });
        await record({ status: 'failed', attempt: 'failure' });
        throw new Permanent(toTenant ? error.tenantMessage : error.message);
      }

      async function settle(response: Extract<SendOutcome, { kind: 'response' }>) {
        const excerpt = excerptOf(response.body.toString('utf8'), response.isTruncated);
        ctx.setDetails({
          status: response.status,
          durationMs: response.durationMs,
          ...(response.retryAfter !== null ? { retryAfter: response.retryAfter.slice(0, 64) } : {}),
          ...(excerpt ? { excerpt } : {}),
        });
        const verdict = classifyResponse(response.status, response.retryAfter);
        const what = `endpoint ${start!.endpoint!.id} answered ${response.status}${excerpt ? `: ${excerpt}` : ''}`;
        if (verdict.kind === 'done') {
          // A healthy endpoint's success is written with the job's `done`, in the worker's
          // batched finish (successWithDone): the slot is free now, not after a store call
          // of its own. A probe's, or one that ends a failure streak, is recorded here, in
          // order with the failures of its turn (a later failure must not count it as still
          // failing).
          const handOff = deps.successWithDone ? (ctx as WorkerTaskContext)[DELIVERED_WITH_DONE] : undefined;
          if (handOff && start!.admission?.kind === 'send' && !start!.isFailing) {
            handOff.call(ctx, { deliveryId: start!.delivery.id, endpointId: start!.delivery.endpointId, breaker: settings.breaker });
          } else {
            await record({ status: 'delivered', attempt: 'success' });
          }
          return { status: response.status };
        }
        if (response.status === 410) {
          await record({ status: 'failed', attempt: 'failure', disableReason: GONE_REASON });
          throw new Permanent(what);
        }
        if (verdict.kind === 'permanent') {
          await record({ status: 'failed', attempt: 'failure' });
          throw new Permanent(what);
        }
        // 5xx and 408 say the receiver is unwell (the breaker counts them); 409/425/429 say "not now".
        await record({ status: failed(), attempt: response.status >= 500 || response.status === 408 ? 'outage' : 'failure' });
        if (verdict.retryAfterMs !== null) throw new RetryAfter(verdict.retryAfterMs, what, { atLeastBackoff: true });
        throw new Error(what);
      }
    },
  };
}

/** What an attempt says of its delivery and endpoint (the rest of a DeliveryRecord is known). */
type AttemptFields = Pick<DeliveryRecord, 'status' | 'attempt' | 'disableReason'>;

/** The delivery's outcome and the endpoint's health, with this turn's other records; a disable is logged and counted. */
async function recordAttempt(
  deps: DeliverTaskDeps,
  recordDelivery: (record: DeliveryRecord) => Promise<DeliveryRecordResult>,
  start: DeliveryStart,
  fields: AttemptFields,
  jobId: string,
): Promise<void> {
  const { disabledReason } = await recordDelivery({ deliveryId: start.delivery.id, endpointId: start.delivery.endpointId, ...fields });
  if (disabledReason === null) return;
  deps.log.warn({ endpointId: start.delivery.endpointId, tenant: start.message.tenant, jobId, reason: disabledReason }, 'endpoint disabled');
  deps.onEndpointDisabled?.(start.delivery.endpointId, fields.disableReason ? 'gone' : 'failing');
}

/**
 * The body every endpoint receives: the Standard Webhooks envelope `{ type, timestamp,
 * data }` around the payload exactly as it was published, the same bytes on every attempt.
 */
function envelope(start: DeliveryStart): Buffer {
  const { message } = start;
  return Buffer.from(`{"type":${JSON.stringify(message.type)},"timestamp":${JSON.stringify(message.createdAt.toISOString())},"data":${message.payload}}`, 'utf8');
}

function isCode(error: unknown, code: string): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

