// The built-in `forward` task: POST a stored webhook event to an internal URL with its
// original body and content type, the provider's event headers, stable mailroom-event-id /
// mailroom-attempt headers, and (with a secret) a fresh Standard Webhooks signature —
// the provider's own signature goes stale after its tolerance, so the hop is re-signed.

import { Permanent, RetryAfter } from '../core/errors.js';
import { STANDARD_WEBHOOKS_SCHEDULE_MS } from '../core/backoff.js';
import type { TaskContext, TaskDefinition } from '../core/task-registry.js';
import type { ForwardTaskConfig } from '../config/define-config.js';
import { SECRET_HEADERS } from '../providers/index.js';
import { isSecretName } from '../core/secret-names.js';
import { signStandardWebhook } from '../providers/standard-webhooks-scheme.js';
import { standardWebhooksKey } from '../providers/standard.js';
import { traceHttpCall } from '../tracing.js';
import { urlWithoutSecrets } from '../core/display-text.js';
import { classifyResponse, isSuccessStatus } from './classify-response.js';
import { excerptOf } from './response-excerpt.js';

/** 30 s: an internal app that takes longer is better retried than waited on. */
export const DEFAULT_FORWARD_REQUEST_TIMEOUT_MS = 30_000;
/** 8 attempts over the Standard Webhooks schedule: an outage of hours does not dead-letter events. */
export const DEFAULT_FORWARD_MAX_ATTEMPTS = STANDARD_WEBHOOKS_SCHEDULE_MS.length + 1;

/**
 * Stored headers never sent on: transport headers, the first hop's Standard Webhooks id and
 * timestamp (the hop is re-signed with its own), and every signature or credential header
 * in any provider's spelling. Storage drops those already; events stored by an older
 * version may still hold one.
 */
const NOT_FORWARDED = new Set([
  'host', 'content-length', 'connection', 'keep-alive', 'transfer-encoding', 'te', 'trailer', 'upgrade',
  'expect', 'proxy-connection', 'accept-encoding',
  'webhook-id', 'webhook-timestamp', 'svix-id', 'svix-timestamp',
  // Who the client was is for the hop that saw it: a sender's own X-Forwarded-For would
  // reach an app that trusts its loopback proxy as a spoofed client address.
  'forwarded', 'x-real-ip', 'x-client-ip', 'x-cluster-client-ip', 'true-client-ip', 'cf-connecting-ip', 'fastly-client-ip',
  ...SECRET_HEADERS,
]);

export interface ForwardDeps {
  /** Injected for tests; the global fetch otherwise. */
  readonly fetch?: typeof fetch;
}

/**
 * A TaskDefinition that forwards the job's event (or, for a job enqueued directly, its
 * payload as JSON) to `config.url`.
 * @example mr.task('to_app', createForwardTask({ kind: 'forward', url: 'http://127.0.0.1:3000/hooks' }));
 */
export function createForwardTask(config: ForwardTaskConfig, deps: ForwardDeps = {}): TaskDefinition {
  const doFetch = deps.fetch ?? fetch;
  const signingKey = config.secret === undefined ? null : standardWebhooksKey(config.secret);
  if (config.secret !== undefined && signingKey === null) throw new Permanent('forward secret is not whsec_ followed by base64');
  const requestTimeoutMs = config.requestTimeoutMs ?? DEFAULT_FORWARD_REQUEST_TIMEOUT_MS;
  // The URL as errors show it: they reach the job's history, logs and the dashboard.
  const shownUrl = urlWithoutSecrets(config.url);
  return {
    maxAttempts: config.maxAttempts ?? DEFAULT_FORWARD_MAX_ATTEMPTS,
    retryScheduleMs: config.retryScheduleMs ?? (config.backoff ? undefined : STANDARD_WEBHOOKS_SCHEDULE_MS),
    ...(config.backoff ? { backoff: config.backoff } : {}),
    ...(config.timeoutMs !== undefined ? { timeoutMs: config.timeoutMs } : {}),
    ...(config.queue !== undefined ? { queue: config.queue } : {}),
    async run(payload: unknown, ctx: TaskContext) {
      const { body, headers } = buildRequest(payload, ctx, config, signingKey);
      const timeout = AbortSignal.timeout(requestTimeoutMs);
      const signal = anySignal([ctx.signal, timeout]);
      const startedAt = performance.now();
      const tookMs = () => Math.round(performance.now() - startedAt);
      let response: Response;
      try {
        // A Uint8Array view of the same bytes: fetch's DOM typing (pulled in by the
        // dashboard's JSX types) takes an ArrayBuffer-backed view, not node's Buffer type.
        const bytes = new Uint8Array(body.buffer as ArrayBuffer, body.byteOffset, body.byteLength);
        response = await traceHttpCall('POST', config.url, headers, () => doFetch(config.url, { method: 'POST', body: bytes, headers, signal, redirect: 'manual' }));
      } catch (error) {
        // fetch's own messages may quote the URL whole.
        const reason = networkMessage(error).split(config.url).join(shownUrl);
        ctx.setDetails({ durationMs: tookMs(), error: timeout.aborted ? 'timeout' : reason });
        if (ctx.signal.aborted) throw ctx.signal.reason ?? error;
        if (timeout.aborted) throw new Error(`forward to ${shownUrl} timed out after ${requestTimeoutMs} ms`);
        throw new Error(`forward to ${shownUrl} failed: ${reason}`);
      }
      const excerpt = await readExcerpt(response);
      const retryAfter = response.headers.get('retry-after');
      // What the attempt's history shows of the answer: status, time, and for a failure the
      // start of the body and any Retry-After (the excerpt is bounded well under 8 KiB).
      ctx.setDetails({
        status: response.status,
        durationMs: tookMs(),
        ...(retryAfter !== null ? { retryAfter: retryAfter.slice(0, 64) } : {}),
        ...(excerpt ? { excerpt } : {}),
      });
      const verdict = classifyResponse(response.status, retryAfter);
      const what = `forward to ${shownUrl} answered ${response.status}${excerpt ? `: ${excerpt}` : ''}`;
      if (verdict.kind === 'done') {
        ctx.log.debug({ jobId: ctx.job.id, status: response.status }, 'event forwarded');
        return;
      }
      if (verdict.kind === 'permanent') throw new Permanent(what);
      if (verdict.retryAfterMs !== null) throw new RetryAfter(verdict.retryAfterMs, what, { atLeastBackoff: true });
      throw new Error(what);
    },
  };
}

function buildRequest(
  payload: unknown,
  ctx: TaskContext,
  config: ForwardTaskConfig,
  signingKey: Buffer | null,
): { body: Buffer; headers: Record<string, string> } {
  const headers: Record<string, string> = {};
  let body: Buffer;
  let messageId: string;
  if (ctx.event) {
    for (const [name, value] of Object.entries(ctx.event.headers)) {
      const lower = name.toLowerCase();
      if (!NOT_FORWARDED.has(lower) && !lower.startsWith('x-forwarded-') && !isSecretName(lower)) headers[lower] = value;
    }
    body = ctx.event.rawBody;
    headers['content-type'] = ctx.event.headers['content-type'] ?? 'application/octet-stream';
    headers['mailroom-event-id'] = ctx.event.id;
    if (ctx.event.type !== null) headers['mailroom-event-type'] = ctx.event.type;
    headers['mailroom-source'] = ctx.event.source;
    messageId = `evt_${ctx.event.id}`;
  } else {
    body = Buffer.from(JSON.stringify(payload ?? null), 'utf8');
    headers['content-type'] = 'application/json';
    messageId = `job_${ctx.job.id}`;
  }
  headers['mailroom-job-id'] = ctx.job.id;
  // The same on every attempt of the job (retries, and replays too), so a receiver that
  // dedupes on Idempotency-Key applies a delivery it already took once.
  headers['idempotency-key'] = `mailroom-job-${ctx.job.id}`;
  headers['mailroom-attempt'] = String(ctx.attempt);
  headers['user-agent'] = 'mailroom-forward';
  for (const [name, value] of Object.entries(config.headers ?? {})) headers[name.toLowerCase()] = value;
  if (signingKey !== null) Object.assign(headers, signStandardWebhook(signingKey, messageId, new Date(), body));
  return { body, headers };
}

/** A signal that aborts when any of `signals` does (AbortSignal.any is Node ≥ 20.3). */
export function anySignal(signals: readonly AbortSignal[]): AbortSignal {
  const native = (AbortSignal as { any?: (s: AbortSignal[]) => AbortSignal }).any;
  if (native) return native([...signals]);
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  }
  return controller.signal;
}

async function readExcerpt(response: Response): Promise<string> {
  if (isSuccessStatus(response.status)) {
    await response.body?.cancel().catch(() => undefined);
    return '';
  }
  try {
    return excerptOf(await response.text());
  } catch {
    return '';
  }
}

/** A fetch or socket error as one line: its code and message. */
export function networkMessage(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } })?.cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  return (error as Error)?.message ?? String(error);
}
