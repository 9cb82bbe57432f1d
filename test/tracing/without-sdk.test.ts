// OpenTelemetry without an SDK, the default: @opentelemetry/api is a no-op, and Mailroom
// must store no trace context with its jobs (even for a request that arrives with a
// traceparent) while everything runs as before. Its own file because traces.test.ts
// registers an SDK in the process-wide API globals.

import { propagation, trace } from '@opentelemetry/api';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClaimedJob } from '../../src/core/types.js';
import { createForwardTask } from '../../src/tasks/forward.js';
import { storeHarnesses } from '../harness/stores.js';
import { closeAll, openIngressMailroom, postHook, standardWebhookHeaders, startIngress } from '../ingress/ingress-kit.js';
import { startReceiver } from '../tasks/task-kit.js';
import type { Receiver } from '../tasks/task-kit.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

it('runs with no OpenTelemetry SDK or propagator registered in this file', () => {
  expect(propagation.fields()).toEqual([]);
  expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
});

describe.each(storeHarnesses)('no SDK on $name', (harness) => {
  let receiver: Receiver | undefined;

  afterEach(async () => {
    await closeAll(harness);
    await receiver?.close();
    receiver = undefined;
  });

  it.skipIf(!harness.isAvailable)('stores no trace context for jobs from a traced request or from code, and still runs them', async () => {
    receiver = await startReceiver();
    const { mr, harnessStore } = await openIngressMailroom(harness);
    mr.task('to_app', createForwardTask({ kind: 'forward', url: receiver.url }));
    mr.task('report', () => undefined);
    const { url } = await startIngress(mr, { sources: { standard: { provider: 'standard', secrets: [SECRET], tasks: ['to_app'] } } });

    const body = Buffer.from('{"type":"invoice.paid"}', 'utf8');
    const response = await postHook(url, 'standard', body, {
      ...standardWebhookHeaders(SECRET, 'msg_untraced', body),
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    });
    expect(response.status).toBe(202);
    const single = await mr.enqueue('report', { n: 1 });
    const batch = await mr.enqueueMany([{ type: 'report', payload: { n: 2 } }, { type: 'report', payload: { n: 3 } }]);
    expect([single, ...batch].map((job) => job.traceContext)).toEqual([null, null, null]);

    const worker = mr.work({ pollMs: 20 });
    const completed: string[] = [];
    worker.on('completed', (job: ClaimedJob) => completed.push(job.id));
    await worker.drained();
    expect(completed).toHaveLength(4);
    expect(receiver.received).toHaveLength(1);
    const [stored] = await harnessStore.query!('SELECT count(*) AS n FROM mailroom_job WHERE trace_context IS NOT NULL');
    expect(Number(stored!.n)).toBe(0);
  });
});
