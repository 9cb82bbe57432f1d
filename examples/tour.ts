// The README's "five-minute tour", run as written: test/examples.test.ts checks that the
// README's block is in this file verbatim and that running it prints the Output below.
// One stand-in: the mail API. `fetch` here answers 202 like a mail service that took the
// message, so the example runs without a network.
globalThis.fetch = async () => new Response(null, { status: 202 });

import { Mailroom, Permanent, RetryAfter } from 'mailroom';

const mr = await Mailroom.open({ db: 'sqlite:./data/mailroom.db' }); // or postgres://…

mr.task('send_email', {
  maxAttempts: 8,                                   // default 5
  timeoutMs: 20_000,                                // aborts ctx.signal; a transient failure
  backoff: { baseMs: 2_000, capMs: 900_000, jitter: 'equal' },
  queue: 'email',
  async run(payload, ctx) {
    const res = await fetch('https://mail.example/send', { signal: ctx.signal, method: 'POST', body: JSON.stringify(payload) });
    if (res.status === 404) throw new Permanent('no such template');        // dead now
    if (res.status === 429) throw new RetryAfter(30_000, 'rate limited');   // not before 30 s
    if (!res.ok) throw new Error(`mail API answered ${res.status}`);        // retried with backoff
  },
});

// Enqueue: idempotency key, ordering group, priority, delay, attempt budget.
await mr.enqueue('send_email', { userId: 42 }, { key: 'welcome:42', group: 'user:42', delayMs: 60_000 });

// Work: claims in batches, heartbeats leases, retries, parks what keeps failing.
const worker = mr.work({ concurrency: 10, queues: ['email'] });

// Operate: every failure is visible and replayable.
const dead = await mr.listJobs({ status: 'dead' });
await mr.replay({ status: 'dead', type: 'send_email' }, { reason: 'fixed template' });
await mr.retryNow({ type: 'send_email' }); // pending jobs waiting for a retry: due now, attempts untouched
await worker.drained(); // resolves once nothing it could run now is left
console.log(await mr.stats()); // { byStatus: { pending, running, done, dead }, byQueue, oldestPendingAgeMs, paused, … }

await worker.stop({ timeoutMs: 10_000 }); // graceful: finish, or hand back uncharged
await mr.close();
// The library installs no signal handlers: call worker.stop() on SIGTERM (docs/operating.md §7).

// The welcome email waits out its minute: retryNow by filter leaves jobs only delayed.
// Output:
// {
//   byStatus: { pending: 1, running: 0, done: 0, dead: 0 },
//   byQueue: { email: { pending: 1, running: 0, done: 0, dead: 0 } },
//   oldestPendingAgeMs: 0,
//   oldestPendingAgeMsByQueue: {},
//   paused: [],
//   durability: {
//     store: 'sqlite',
//     synchronous: 'full',
//     acknowledgements: 'FULL',
//     bookkeeping: 'NORMAL',
//     journal: 'wal'
//   }
// }
