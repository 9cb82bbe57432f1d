// Workload 8 (tracing): what Mailroom's spans cost with no OpenTelemetry SDK registered,
// which is how it runs unless the application starts one. Each traced entry point is
// timed against the same work called directly, in one process, so the difference is the
// tracing code alone: the API's no-op tracer, the checks around it, one extra call.
// Reported per call, and as a share of what a webhook or a job costs in the rows above.

import { endAttempt, runInAttempt, startAttempt, traceEnqueue, traceIngress } from '../../dist/tracing.js';

const CALLS = 200_000;
const REPEATS = 7;

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** ns per call of `fn` over CALLS calls (awaited when it returns a promise), the median of REPEATS. */
async function timePerCall(fn) {
  const samples = [];
  for (let r = 0; r < REPEATS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < CALLS; i++) {
      const out = fn(i);
      if (out instanceof Promise) await out;
    }
    samples.push(Number(process.hrtime.bigint() - t0) / CALLS);
  }
  return median(samples);
}

const job = { id: '1', queue: 'default', type: 'noop', attempts: 1, leaseOwner: 'w', eventId: null, traceContext: null };
const inserts = [{ queue: 'default', type: 'noop', priority: 0, payloadJson: 'null', maxAttempts: 5, runAt: null, delayMs: 0, key: null, group: null }];
const inserted = [{ job, isDuplicate: false }];
const insert = () => inserted;
const handler = (a, b) => a + b;
const done = { kind: 'done' };
const req = { method: 'POST', headers: { 'content-type': 'application/json', 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' } };
const res = { statusCode: 202 };
const handle = async () => {};

export async function runTracing() {
  const pairs = {
    'ingress request (traceIngress)': [() => handle(), () => traceIngress(req, res, 'bench', handle)],
    'enqueue / ingest (traceEnqueue)': [() => insert(inserts), () => traceEnqueue('enqueue', inserts, insert)],
    'attempt (start, run in, end)': [
      (i) => handler(i, 1),
      (i) => {
        const attempt = startAttempt(job);
        const out = runInAttempt(attempt, handler, undefined, i, 1);
        endAttempt(attempt, done);
        return out;
      },
    ],
  };
  const rows = {};
  for (const [label, [direct, traced]] of Object.entries(pairs)) {
    // Warm both up first so neither side pays the JIT.
    await timePerCall(direct);
    await timePerCall(traced);
    const directNs = await timePerCall(direct);
    const tracedNs = await timePerCall(traced);
    rows[label] = { directNs, tracedNs, costNs: tracedNs - directNs };
  }
  return rows;
}
