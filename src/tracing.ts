// OpenTelemetry spans, through @opentelemetry/api only: the ingress request (SERVER), each
// enqueue (PRODUCER), each attempt (CONSUMER) and forward's HTTP call (CLIENT), joined
// into one trace by the W3C trace context that is stored with every job. Without an SDK
// the API is not loaded and every call returns at once: nothing is stored, serialised or
// allocated (docs/operating.md, "Tracing"). With the API loaded but nothing recording,
// measured on 2 cores: about 40 ns per attempt and 50 ns per enqueue, against some 50 µs
// a job costs end to end.

import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Attributes, Context, Span, SpanOptions, Tracer } from '@opentelemetry/api';
import type { Job } from './core/types.js';
import type { BatchInsertResult, EventInsertWithJobsResult, JobInsert, JobInsertResult } from './store/store.js';
import type { MessagePublishResult } from './store/outgoing-store.js';
import type { Outcome } from './worker/executor.js';

/** The instrumentation scope of every span Mailroom makes. */
export const TRACER_NAME = 'mailroom';
/** `messaging.system` on every messaging span. */
const MESSAGING_SYSTEM = 'mailroom';
const HOOKS_ROUTE = '/hooks/:source';
/** HTTP server span names are the method and the route. */
const INGRESS_SPAN_NAME = `POST ${HOOKS_ROUTE}`;

/**
 * Where every copy of @opentelemetry/api 1.x keeps what an SDK registered (a tracer
 * provider, a propagator, a context manager): the one global all copies share, so an
 * app's SDK and our API find each other. Until something is registered there, every API
 * call is a no-op, so the API is not even loaded (some 45 modules and ~5 MB of a worker's
 * memory): each trace function asks first, one property read.
 */
const OTEL_GLOBAL = Symbol.for('opentelemetry.js.api.1');

type OtelApi = typeof import('@opentelemetry/api');

/** The API, once something registered with it, and what is made once from it. */
interface Otel {
  readonly api: OtelApi;
  // One tracer for the process: a ProxyTracer that delegates to whichever provider an SDK
  // registers, even one registered after this was loaded.
  readonly tracer: Tracer;
  // Shared, so starting a span allocates nothing of ours.
  readonly SERVER: SpanOptions;
  readonly PRODUCER: SpanOptions;
  readonly CONSUMER: SpanOptions;
  readonly CLIENT: SpanOptions;
  readonly INTERNAL: SpanOptions;
}

let loaded: Otel | null = null;

/** The API when an SDK (or anything) registered with it; null while every call would be a no-op. */
function otel(): Otel | null {
  if (loaded !== null) return loaded;
  if ((globalThis as Record<symbol, unknown>)[OTEL_GLOBAL] === undefined) return null;
  const api = createRequire(import.meta.url)('@opentelemetry/api') as OtelApi;
  loaded = {
    api,
    tracer: api.trace.getTracer(TRACER_NAME),
    SERVER: { kind: api.SpanKind.SERVER },
    PRODUCER: { kind: api.SpanKind.PRODUCER },
    CONSUMER: { kind: api.SpanKind.CONSUMER },
    CLIENT: { kind: api.SpanKind.CLIENT },
    INTERNAL: { kind: api.SpanKind.INTERNAL },
  };
  return loaded;
}

/** An attempt that is not traced: its handler runs as it is, in no context of ours. */
const UNTRACED: unique symbol = Symbol('mailroom.untraced');

/** The trace handle of one attempt: the context its handler runs in, or UNTRACED. */
export type AttemptTrace = Context | typeof UNTRACED;

/** What an enqueue hands back, whichever path made it. */
type EnqueueResult = readonly JobInsertResult[] | Job | EventInsertWithJobsResult | BatchInsertResult | MessagePublishResult;

/**
 * Runs `handle` for a request to /hooks/:source inside a SERVER span whose parent is the
 * request's own `traceparent`, so the jobs it stores continue the sender's trace. When a
 * span is already active for the request (HTTP auto-instrumentation made the SERVER span
 * and read the traceparent), Mailroom's span is an INTERNAL child of it instead: one
 * trace, not two, even when the sender sends no traceparent (most providers do not).
 */
export function traceIngress(req: IncomingMessage, res: ServerResponse, source: string, handle: () => Promise<void>): Promise<void> {
  const o = otel();
  // Untraced, the request's own promise is handed back: no async frame of ours around it
  // (that frame and its extra promise cost more than the rest of this function).
  if (o === null) return handle();
  const { api } = o;
  const active = api.context.active();
  const outer = api.trace.getSpan(active);
  const isNested = outer !== undefined && isTraced(api, outer);
  const parent = isNested ? active : api.propagation.extract(api.ROOT_CONTEXT, req.headers);
  const span = o.tracer.startSpan(INGRESS_SPAN_NAME, isNested ? o.INTERNAL : o.SERVER, parent);
  if (!isTraced(api, span)) return handle();
  return runIngressSpan(api, span, parent, req, res, source, handle);
}

async function runIngressSpan(
  api: OtelApi,
  span: Span,
  parent: Context,
  req: IncomingMessage,
  res: ServerResponse,
  source: string,
  handle: () => Promise<void>,
): Promise<void> {
  if (span.isRecording()) {
    span.setAttributes({
      'http.request.method': req.method ?? 'POST',
      'http.route': HOOKS_ROUTE,
      'url.path': `/hooks/${source}`.slice(0, 200),
      'url.scheme': 'http',
      'mailroom.source': source.slice(0, 100),
    });
  }
  try {
    await api.context.with(api.trace.setSpan(parent, span), handle);
  } catch (error) {
    failSpan(api, span, error);
    throw error;
  } finally {
    if (span.isRecording()) {
      span.setAttribute('http.response.status_code', res.statusCode);
      // A 4xx is the sender's problem, not this server's (HTTP server span conventions).
      if (res.statusCode >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
    }
    span.end();
  }
}

/**
 * Runs `insert` for `jobs` inside a PRODUCER span (parent: the caller's active context)
 * and hands it the jobs with that span's trace context to store. Synchronous when
 * `insert` is (SQLite's `mr.transaction`). Untraced, `insert` gets `jobs` as they are.
 */
export function traceEnqueue<R extends EnqueueResult | Promise<EnqueueResult>>(
  operation: 'enqueue' | 'ingest' | 'publish',
  jobs: readonly JobInsert[],
  insert: (jobs: readonly JobInsert[]) => R,
): R {
  const o = otel();
  if (o === null || jobs.length === 0) return insert(jobs);
  const { api } = o;
  const queue = commonQueue(jobs);
  const span = o.tracer.startSpan(queue === null ? 'send' : spanName(SEND_NAMES, 'send', queue), o.PRODUCER);
  if (!isTraced(api, span)) return insert(jobs);
  const spanContext = api.trace.setSpan(api.context.active(), span);
  const traceContext = injectedCarrier(api, spanContext);
  const traced = traceContext === null ? jobs : jobs.map((job) => ({ ...job, traceContext }));
  if (span.isRecording()) {
    const attributes: Attributes = {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.operation.type': 'send',
      'messaging.operation.name': operation,
    };
    if (queue !== null) attributes['messaging.destination.name'] = queue;
    if (jobs.length > 1) attributes['messaging.batch.message_count'] = jobs.length;
    else attributes['messaging.mailroom.job.type'] = jobs[0]!.type;
    span.setAttributes(attributes);
  }
  let result: R;
  try {
    result = api.context.with(spanContext, insert, undefined, traced);
  } catch (error) {
    failSpan(api, span, error);
    span.end();
    throw error;
  }
  if (!isPromise(result)) {
    endEnqueue(span, result, jobs.length);
    return result;
  }
  return result.then(
    (value) => {
      endEnqueue(span, value, jobs.length);
      return value;
    },
    (error: unknown) => {
      failSpan(api, span, error);
      span.end();
      throw error;
    },
  ) as R;
}

/**
 * Starts the CONSUMER span of one attempt, a child of the context stored with the job (a
 * new trace when it has none); runInAttempt runs the handler in it, endAttempt ends it.
 */
export function startAttempt(job: Job): AttemptTrace {
  const o = otel();
  if (o === null) return UNTRACED;
  const { api } = o;
  const parent = job.traceContext === null ? api.ROOT_CONTEXT : extractStored(api, job.traceContext);
  const span = o.tracer.startSpan(spanName(PROCESS_NAMES, 'process', job.queue), o.CONSUMER, parent);
  if (!isTraced(api, span)) return UNTRACED;
  if (span.isRecording()) {
    const attributes: Attributes = {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.destination.name': job.queue,
      'messaging.message.id': job.id,
      'messaging.mailroom.job.type': job.type,
      'messaging.mailroom.job.attempt': job.attempts,
    };
    if (job.leaseOwner !== null) attributes['messaging.client.id'] = job.leaseOwner;
    if (job.eventId !== null) attributes['messaging.mailroom.event.id'] = job.eventId;
    span.setAttributes(attributes);
  }
  return api.trace.setSpan(parent, span);
}

/** Calls `fn` with `this` and two arguments as the active context of `attempt` (no closure). */
export function runInAttempt<A, B, T>(attempt: AttemptTrace, fn: (a: A, b: B) => T, thisArg: unknown, a: A, b: B): T {
  return attempt === UNTRACED ? fn.call(thisArg, a, b) : loaded!.api.context.with(attempt, fn, thisArg, a, b);
}

/** Ends the attempt's span with how the attempt ended; an error status unless it was done. */
export function endAttempt(attempt: AttemptTrace, outcome: Outcome): void {
  if (attempt === UNTRACED) return;
  const { api } = loaded!;
  const span = api.trace.getSpan(attempt);
  if (!span) return;
  if (span.isRecording()) {
    span.setAttribute('messaging.mailroom.job.outcome', outcome.kind);
    if (outcome.kind !== 'done') failSpan(api, span, outcome.error);
  }
  span.end();
}

/**
 * Runs one outgoing HTTP request (`send`) inside a CLIENT span, a child of the active
 * context (the attempt), after injecting that span's `traceparent` into `headers`; any
 * trace headers already there (copied from the stored inbound request) are replaced.
 * `send` resolves to a fetch Response or anything with the answer's `status`; one that
 * reports a failure instead of throwing it names it through `failureOf` (deliver's
 * timeouts and network errors).
 */
export async function traceHttpCall<R extends object>(
  method: string,
  url: string,
  headers: Record<string, string>,
  send: () => Promise<R>,
  failureOf: (result: R) => unknown = () => undefined,
): Promise<R> {
  const o = otel();
  if (o === null) return send();
  const { api } = o;
  const span = o.tracer.startSpan(method, o.CLIENT);
  if (!isTraced(api, span)) return send();
  const spanContext = api.trace.setSpan(api.context.active(), span);
  for (const field of api.propagation.fields()) delete headers[field];
  api.propagation.inject(spanContext, headers);
  if (span.isRecording()) span.setAttributes(httpClientAttributes(method, url));
  try {
    const result = await api.context.with(spanContext, send);
    const status = (result as { status?: unknown }).status;
    const failure = failureOf(result);
    if (span.isRecording() && failure !== undefined) failSpan(api, span, failure);
    else if (span.isRecording() && typeof status === 'number') {
      span.setAttribute('http.response.status_code', status);
      if (status >= 400) {
        span.setAttribute('error.type', String(status));
        span.setStatus({ code: api.SpanStatusCode.ERROR });
      }
    }
    return result;
  } catch (error) {
    failSpan(api, span, error);
    throw error;
  } finally {
    span.end();
  }
}

// ---- internals ----

/**
 * A span worth propagating: the SDK's (recording or sampled out), or a no-op span that
 * carries a parent's context through. The API's plain no-op span is INVALID_SPAN_CONTEXT
 * itself, so the common untraced case costs one comparison.
 */
function isTraced(api: OtelApi, span: Span): boolean {
  const spanContext = span.spanContext();
  return spanContext !== api.INVALID_SPAN_CONTEXT && api.isSpanContextValid(spanContext);
}

/** What the propagator injects for `ctx`, as the JSON stored with a job; null when nothing. */
function injectedCarrier(api: OtelApi, ctx: Context): string | null {
  const carrier: Record<string, string> = {};
  api.propagation.inject(ctx, carrier);
  for (const _field in carrier) return JSON.stringify(carrier);
  return null;
}

/** The context a stored carrier describes; ROOT_CONTEXT without a propagator or for bad text. */
function extractStored(api: OtelApi, traceContext: string): Context {
  // No propagator registered: nothing could read it, so skip the parse.
  if (api.propagation.fields().length === 0) return api.ROOT_CONTEXT;
  try {
    const carrier: unknown = JSON.parse(traceContext);
    if (typeof carrier !== 'object' || carrier === null) return api.ROOT_CONTEXT;
    return api.propagation.extract(api.ROOT_CONTEXT, carrier);
  } catch {
    return api.ROOT_CONTEXT;
  }
}

function endEnqueue(span: Span, result: EnqueueResult, count: number): void {
  if (count === 1 && span.isRecording()) {
    const id = firstJobId(result);
    if (id !== undefined) span.setAttribute('messaging.message.id', id);
  }
  span.end();
}

function firstJobId(result: EnqueueResult): string | undefined {
  if (Array.isArray(result)) return (result as readonly JobInsertResult[])[0]?.job.id;
  if ('jobs' in result) return result.jobs[0]?.id;
  if ('deliveries' in result) return result.deliveries[0]?.jobId ?? undefined;
  return (result as Job).id;
}

function failSpan(api: OtelApi, span: Span, error: unknown): void {
  if (!span.isRecording()) return;
  if (error instanceof Error) span.recordException(error);
  span.setAttribute('error.type', errorType(error));
  span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.message.slice(0, 1_000) : String(error).slice(0, 1_000) });
}

/** A low-cardinality name for an error: Mailroom's code (MR_ERR_TIMEOUT, permanent), else its class. */
function errorType(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
  return error instanceof Error ? error.name : '_OTHER';
}

/**
 * url.full without credentials or query (a forward URL may carry a token in either), and
 * the server's address and port.
 */
function httpClientAttributes(method: string, url: string): Attributes {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { 'http.request.method': method };
  }
  const defaultPort = parsed.protocol === 'https:' ? 443 : 80;
  return {
    'http.request.method': method,
    'url.full': `${parsed.protocol}//${parsed.host}${parsed.pathname}`,
    'server.address': parsed.hostname,
    'server.port': parsed.port === '' ? defaultPort : Number(parsed.port),
  };
}

function commonQueue(jobs: readonly JobInsert[]): string | null {
  const queue = jobs[0]!.queue;
  for (let i = 1; i < jobs.length; i++) if (jobs[i]!.queue !== queue) return null;
  return queue;
}

// Span names per queue ("send email"), kept so starting a span builds no string. Queues
// are few (they name worker pools); the cap only guards against a caller that makes
// queue names up per job.
const SEND_NAMES = new Map<string, string>();
const PROCESS_NAMES = new Map<string, string>();
const MAX_CACHED_NAMES = 1_000;

function spanName(names: Map<string, string>, operation: string, queue: string): string {
  let name = names.get(queue);
  if (name === undefined) {
    name = `${operation} ${queue}`;
    if (names.size < MAX_CACHED_NAMES) names.set(queue, name);
  }
  return name;
}

function isPromise<T>(value: unknown): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}
