// OpenTelemetry with the SDK registered (in this file only: the API keeps its provider in
// a process global, and Mailroom's tracer holds on to the provider it first found, so the
// no-SDK behaviour is tested in its own file, without-sdk.test.ts). A signed webhook
// posted to the real server runs its forward job to a real local receiver; every span of
// that journey must land in one trace, on both stores.

import { context, propagation, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { MailroomConfig } from '../../src/config/define-config.js';
import { validateConfig } from '../../src/config/validate-config.js';
import type { ClaimedJob } from '../../src/core/types.js';
import { createIngressServer } from '../../src/ingress/server.js';
import { Mailroom } from '../../src/mailroom.js';
import { createForwardTask } from '../../src/tasks/forward.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor, waitForEvent } from '../harness/wait.js';
import { closeAll, openIngressMailroom, postHook, silentLog, standardWebhookHeaders, startIngress } from '../ingress/ingress-kit.js';
import { startReceiver } from '../tasks/task-kit.js';
import type { Receiver } from '../tasks/task-kit.js';
import { closeOutgoingMailrooms, openOutgoingMailroom, startVerifyingReceiver } from '../outgoing/outgoing-kit.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SENDER_TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const SENDER_SPAN_ID = '00f067aa0ba902b7';
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/;

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });

beforeAll(() => {
  // What an SDK setup (NodeSDK, NodeTracerProvider.register()) does: a provider, the W3C
  // propagator, and an AsyncLocalStorage context manager so contexts follow awaits.
  trace.setGlobalTracerProvider(provider);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
});

afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  propagation.disable();
  context.disable();
});

function signedBody(id: string, extraHeaders: Record<string, string> = {}): { body: Buffer; headers: Record<string, string> } {
  const body = Buffer.from(JSON.stringify({ type: 'invoice.paid', data: { id } }), 'utf8');
  return { body, headers: { ...standardWebhookHeaders(SECRET, id, body), ...extraHeaders } };
}

function spansOfKind(spans: readonly ReadableSpan[], kind: SpanKind): ReadableSpan[] {
  return spans.filter((span) => span.kind === kind);
}

function only(spans: readonly ReadableSpan[], kind: SpanKind): ReadableSpan {
  const found = spansOfKind(spans, kind);
  expect(found.map((span) => span.name), `spans of kind ${SpanKind[kind]}`).toHaveLength(1);
  return found[0]!;
}

function parentOf(span: ReadableSpan): string | undefined {
  return span.parentSpanContext?.spanId;
}

describe.each(storeHarnesses)('traces on $name', (harness) => {
  let receiver: Receiver | undefined;
  const extraMailrooms: Mailroom[] = [];

  beforeEach(() => {
    exporter.reset();
  });

  afterEach(async () => {
    for (const mr of extraMailrooms.splice(0)) await mr.close({ timeoutMs: 2_000 });
    await closeAll(harness);
    await receiver?.close();
    receiver = undefined;
  });

  /** The real server with one `standard` source fanning out to a forward task, and its worker. */
  async function setup(forward: { retryScheduleMs?: number[] } = {}) {
    receiver = await startReceiver();
    const { mr, harnessStore } = await openIngressMailroom(harness);
    mr.task('to_app', createForwardTask({ kind: 'forward', url: receiver.url, ...forward }));
    const config: MailroomConfig = { sources: { standard: { provider: 'standard', secrets: [SECRET], tasks: ['to_app'] } } };
    const { url } = await startIngress(mr, config);
    const worker = mr.work({ pollMs: 20 });
    return { mr, url, worker, harnessStore };
  }

  it.skipIf(!harness.isAvailable)('puts the ingress request, its enqueue, the attempt and the forwarded request in one trace', async () => {
    const { mr, url, worker } = await setup();
    const completed = waitForEvent<ClaimedJob>(worker, 'completed');
    const { body, headers } = signedBody('msg_trace_1');
    const response = await postHook(url, 'standard', body, headers);
    expect(response.status).toBe(202);
    const job = await completed;

    const spans = await waitFor(() => {
      const finished = exporter.getFinishedSpans();
      return [SpanKind.SERVER, SpanKind.PRODUCER, SpanKind.CONSUMER, SpanKind.CLIENT].every((kind) => spansOfKind(finished, kind).length > 0) && finished;
    }, { description: 'the server, producer, consumer and client spans to end' });
    const ingress = only(spans, SpanKind.SERVER);
    const enqueue = only(spans, SpanKind.PRODUCER);
    const attempt = only(spans, SpanKind.CONSUMER);
    const forward = only(spans, SpanKind.CLIENT);
    const traceId = ingress.spanContext().traceId;
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([traceId]));
    // Sent without a traceparent: the trace starts at the ingress.
    expect(ingress.parentSpanContext).toBeUndefined();
    expect(parentOf(enqueue)).toBe(ingress.spanContext().spanId);
    expect(parentOf(attempt)).toBe(enqueue.spanContext().spanId);
    expect(parentOf(forward)).toBe(attempt.spanContext().spanId);

    const sent = String(receiver!.received[0]!.headers.traceparent);
    expect(sent).toMatch(TRACEPARENT);
    expect(TRACEPARENT.exec(sent)!.slice(1, 3)).toEqual([traceId, forward.spanContext().spanId]);

    expect(ingress.name).toBe('POST /hooks/:source');
    expect(ingress.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.route': '/hooks/:source', 'http.response.status_code': 202, 'mailroom.source': 'standard' });
    expect(enqueue.name).toBe('send default');
    expect(enqueue.attributes).toMatchObject({
      'messaging.system': 'mailroom',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'ingest',
      'messaging.destination.name': 'default',
      'messaging.message.id': job.id,
      'messaging.mailroom.job.type': 'to_app',
    });
    expect(attempt.name).toBe('process default');
    expect(attempt.attributes).toMatchObject({
      'messaging.system': 'mailroom',
      'messaging.operation.type': 'process',
      'messaging.destination.name': 'default',
      'messaging.message.id': job.id,
      'messaging.client.id': worker.id,
      'messaging.mailroom.job.type': 'to_app',
      'messaging.mailroom.job.attempt': 1,
      'messaging.mailroom.event.id': response.json.id,
      'messaging.mailroom.job.outcome': 'done',
    });
    expect(attempt.status.code).toBe(SpanStatusCode.UNSET);
    expect(forward.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 204, 'server.address': '127.0.0.1' });
    expect(forward.attributes['url.full']).toBe(receiver!.url);

    const stored = (await mr.getJob(job.id))!;
    expect(JSON.parse(stored.traceContext!).traceparent).toBe(`00-${traceId}-${enqueue.spanContext().spanId}-01`);
  });

  it.skipIf(!harness.isAvailable)("continues the sender's trace from its traceparent and forwards this trace's own", async () => {
    const { url, worker } = await setup();
    const completed = waitForEvent<ClaimedJob>(worker, 'completed');
    const { body, headers } = signedBody('msg_trace_2', {
      traceparent: `00-${SENDER_TRACE_ID}-${SENDER_SPAN_ID}-01`,
      tracestate: 'sender=opaque',
    });
    expect((await postHook(url, 'standard', body, headers)).status).toBe(202);
    await completed;

    const spans = await waitFor(() => spansOfKind(exporter.getFinishedSpans(), SpanKind.SERVER).length > 0 && exporter.getFinishedSpans());
    const ingress = only(spans, SpanKind.SERVER);
    const forward = only(spans, SpanKind.CLIENT);
    expect(ingress.spanContext().traceId).toBe(SENDER_TRACE_ID);
    expect(parentOf(ingress)).toBe(SENDER_SPAN_ID);
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([SENDER_TRACE_ID]));
    // The stored request's traceparent is replaced by the forward span's, not sent on;
    // the sender's tracestate travels with the trace, as W3C Trace Context has it.
    const got = receiver!.received[0]!.headers;
    expect(got.traceparent).toBe(`00-${SENDER_TRACE_ID}-${forward.spanContext().spanId}-01`);
    expect(got.tracestate).toBe('sender=opaque');
  });

  it.skipIf(!harness.isAvailable)('nests the ingress span under a span already active for the request instead of starting a second trace', async () => {
    receiver = await startReceiver();
    const { mr } = await openIngressMailroom(harness);
    mr.task('to_app', createForwardTask({ kind: 'forward', url: receiver.url }));
    const ingress = createIngressServer({
      mr,
      config: validateConfig({ sources: { standard: { provider: 'standard', secrets: [SECRET], tasks: ['to_app'] } } }),
      logger: silentLog,
    });
    // What HTTP auto-instrumentation does: a request span is active when the route runs.
    // Here it comes from listen(): node:http runs request handlers in listen()'s context.
    const outer = trace.getTracer('test').startSpan('http server');
    const url = await context.with(trace.setSpan(context.active(), outer), () => ingress.listen(0, '127.0.0.1'));
    try {
      const { body, headers } = signedBody('msg_trace_nested', { traceparent: `00-${SENDER_TRACE_ID}-${SENDER_SPAN_ID}-01` });
      expect((await postHook(url, 'standard', body, headers)).status).toBe(202);
      const spans = await waitFor(() => spansOfKind(exporter.getFinishedSpans(), SpanKind.PRODUCER).length > 0 && exporter.getFinishedSpans());
      const received = spans.find((span) => span.name === 'POST /hooks/:source')!;
      expect(received.kind).toBe(SpanKind.INTERNAL);
      expect(parentOf(received)).toBe(outer.spanContext().spanId);
      expect(received.spanContext().traceId).toBe(outer.spanContext().traceId);
      expect(parentOf(only(spans, SpanKind.PRODUCER))).toBe(received.spanContext().spanId);
      expect(spansOfKind(spans, SpanKind.SERVER)).toEqual([]);
    } finally {
      outer.end();
      await ingress.close({ timeoutMs: 1_000 });
    }
  });

  it.skipIf(!harness.isAvailable)('records each attempt as its own span in the trace, the failed one with an error status', async () => {
    const { url, worker } = await setup({ retryScheduleMs: [0] });
    let answers = 0;
    receiver!.respond = () => ({ status: answers++ === 0 ? 503 : 204 });
    const completed = waitForEvent<ClaimedJob>(worker, 'completed');
    const { body, headers } = signedBody('msg_trace_3');
    expect((await postHook(url, 'standard', body, headers)).status).toBe(202);
    await completed;

    const spans = await waitFor(() => spansOfKind(exporter.getFinishedSpans(), SpanKind.CONSUMER).length === 2 && exporter.getFinishedSpans());
    const enqueue = only(spans, SpanKind.PRODUCER);
    const attempts = spansOfKind(spans, SpanKind.CONSUMER).sort((a, b) => Number(a.attributes['messaging.mailroom.job.attempt']) - Number(b.attributes['messaging.mailroom.job.attempt']));
    expect(attempts.map((span) => span.attributes['messaging.mailroom.job.attempt'])).toEqual([1, 2]);
    expect(attempts.map((span) => parentOf(span))).toEqual([enqueue.spanContext().spanId, enqueue.spanContext().spanId]);
    expect(attempts[0]!.status.code).toBe(SpanStatusCode.ERROR);
    expect(attempts[0]!.status.message).toContain('answered 503');
    expect(attempts[0]!.attributes).toMatchObject({ 'messaging.mailroom.job.outcome': 'failed', 'error.type': 'Error' });
    expect(attempts[1]!.status.code).toBe(SpanStatusCode.UNSET);

    const calls = spansOfKind(spans, SpanKind.CLIENT).sort((a, b) => Number(a.attributes['http.response.status_code']) - Number(b.attributes['http.response.status_code']));
    expect(calls.map((span) => span.attributes['http.response.status_code'])).toEqual([204, 503]);
    expect(calls[1]!.status.code).toBe(SpanStatusCode.ERROR);
    expect(calls[1]!.attributes['error.type']).toBe('503');
    expect(new Set(spans.map((span) => span.spanContext().traceId)).size).toBe(1);
  });

  it.skipIf(!harness.isAvailable)("delivers a published message in the publisher's trace, its HTTP call a child of the attempt", async () => {
    const target = await startVerifyingReceiver();
    try {
      const mr = await openOutgoingMailroom(harness);
      const endpoint = await mr.endpoints.add({ tenant: 'acme', url: target.url });
      target.secrets.push(endpoint.secret);
      const outer = trace.getTracer('test').startSpan('checkout');
      await context.with(trace.setSpan(context.active(), outer), () => mr.publish('invoice.paid', { invoice: 1 }, { tenant: 'acme' }));
      outer.end();
      mr.work();
      const spans = await waitFor(() => spansOfKind(exporter.getFinishedSpans(), SpanKind.CLIENT).length === 1 && exporter.getFinishedSpans());
      const publish = only(spans, SpanKind.PRODUCER);
      const attempt = await waitFor(() => spansOfKind(exporter.getFinishedSpans(), SpanKind.CONSUMER)[0]);
      const call = only(spans, SpanKind.CLIENT);
      expect(parentOf(publish)).toBe(outer.spanContext().spanId);
      expect(publish.attributes).toMatchObject({ 'messaging.operation.name': 'publish', 'messaging.mailroom.job.type': 'deliver' });
      expect(parentOf(attempt)).toBe(publish.spanContext().spanId);
      expect(parentOf(call)).toBe(attempt.spanContext().spanId);
      expect(call.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 204 });
      // The traceparent rides beside the signature, which still verifies.
      expect(TRACEPARENT.exec(String(target.received[0]!.headers.traceparent))!.slice(1, 3)).toEqual([outer.spanContext().traceId, call.spanContext().spanId]);
      expect(target.received[0]!.verifiedWith).toBe(endpoint.secret);
    } finally {
      await target.close();
      await closeOutgoingMailrooms(harness);
    }
  });

  it.skipIf(!harness.isAvailable)("runs a job enqueued in code in the enqueuer's trace, even in another Mailroom on the same store", async () => {
    const { mr: enqueuer, harnessStore } = await openIngressMailroom(harness);
    const runner = await Mailroom.open({ store: await harnessStore.openAnother(), logger: silentLog });
    extraMailrooms.push(runner);
    const seen: { traceId: string | undefined; spanId: string | undefined }[] = [];
    runner.task('report', () => {
      const active = trace.getActiveSpan()?.spanContext();
      seen.push({ traceId: active?.traceId, spanId: active?.spanId });
    });

    const caller = trace.getTracer('test').startSpan('caller');
    const job = await context.with(trace.setSpan(context.active(), caller), () => enqueuer.enqueue('report', { n: 1 }, { queue: 'reports' }));
    caller.end();
    const worker = runner.work({ pollMs: 20 });
    await waitForEvent<ClaimedJob>(worker, 'completed', { filter: (done) => done.id === job.id });

    const spans = exporter.getFinishedSpans();
    const enqueue = only(spans, SpanKind.PRODUCER);
    const attempt = only(spans, SpanKind.CONSUMER);
    expect(parentOf(enqueue)).toBe(caller.spanContext().spanId);
    expect(parentOf(attempt)).toBe(enqueue.spanContext().spanId);
    expect(attempt.spanContext().traceId).toBe(caller.spanContext().traceId);
    expect(enqueue.attributes).toMatchObject({ 'messaging.operation.name': 'enqueue', 'messaging.destination.name': 'reports', 'messaging.message.id': job.id });
    // The handler runs with its attempt's span active, so its own spans nest under it.
    expect(seen).toEqual([{ traceId: caller.spanContext().traceId, spanId: attempt.spanContext().spanId }]);
  });
});
