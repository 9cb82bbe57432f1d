// Property-based fault tests (fast-check).
// 1. Ingress, on both stores: correctly signed deliveries with timestamps around the
//    tolerance edge, signatures tampered in small ways, signature lists mixing good and
//    bad entries, and random bodies. The answer is 202/200 exactly when the request is
//    genuine and in the window, 401 otherwise, never a 5xx; what is stored is byte-exact,
//    once per delivery id, with its job. (test/ingress/fuzz.test.ts covers unsigned noise.)
// 2. Backoff arithmetic: no delay is negative, fractional or above the cap; a fixed
//    schedule never exceeds its largest step plus jitter.
// 3. Attempts, on both stores: random interleavings of claim, complete, fail (decided as
//    the worker decides), hand-back, heartbeat and rescue at random clock jumps never
//    leave a job with more attempts than its limit, nor a claimable job with none left.

import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import pino from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { computeBackoffMs, scheduleDelayMs, STANDARD_WEBHOOKS_SCHEDULE_MS } from '../../src/core/backoff.js';
import { resolveRetryPolicy, retryDelayMs } from '../../src/core/retry-policy.js';
import { validateConfig } from '../../src/config/validate-config.js';
import { createIngressServer } from '../../src/ingress/server.js';
import type { IngressServer } from '../../src/ingress/server.js';
import { Mailroom } from '../../src/mailroom.js';
import type { ClaimedJob } from '../../src/core/types.js';
import { storeHarnesses } from '../harness/stores.js';
import { boundedAgent, openRawReader } from './kit.js';
import type { Agent } from 'node:http';
import { request } from 'node:http';
import { asDone, asFailed, asHandedBack } from '../harness/finishes.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OTHER_SECRET = 'whsec_b2xkLXNlY3JldC1iZWZvcmUtcm90YXRpb24=';
const TOLERANCE_S = 300;
/** The ingress judges every request at this instant (a whole second, so skews are exact). */
const NOW = new Date('2030-01-01T00:00:00.000Z');

function sign(secret: string, id: string, timestamp: string, body: Buffer): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
}

function post(url: string, agent: Agent, headers: Record<string, string>, body: Buffer): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL('/hooks/p', url), { method: 'POST', agent, headers: { ...headers, 'content-length': String(body.length) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

type Tamper = 'none' | 'flip' | 'other_secret' | 'truncate' | 'good_among_bad' | 'only_bad_list' | 'id_changed' | 'body_changed';
const GENUINE: ReadonlySet<Tamper> = new Set(['none', 'good_among_bad']);

describe.each(storeHarnesses)('signed ingress properties on $name', (harness) => {
  let mr: Mailroom;
  let ingress: IngressServer;
  let url: string;
  let db: string;
  let agent: Agent;

  beforeAll(async () => {
    if (!harness.isAvailable) return;
    const opened = await harness.open();
    db = opened.url;
    mr = await Mailroom.open({ store: opened.store, logger: pino({ level: 'silent' }) });
    ingress = createIngressServer({
      mr,
      logger: pino({ level: 'silent' }),
      now: () => NOW,
      config: validateConfig({ sources: { p: { provider: 'standard', secrets: [SECRET], tasks: ['t'] } } }),
    });
    url = await ingress.listen(0, '127.0.0.1');
    agent = boundedAgent(8);
  });

  afterAll(async () => {
    if (!harness.isAvailable) return;
    agent.destroy();
    await ingress.close({ timeoutMs: 1_000 });
    await mr.close();
    await harness.cleanup();
  });

  it.runIf(harness.isAvailable)('accepts exactly the genuine in-window deliveries, never answers 5xx, and stores each once, byte-exact', async () => {
    const accepted = new Map<string, Buffer>();
    const skew = fc.oneof(
      fc.integer({ min: -2 * TOLERANCE_S, max: 2 * TOLERANCE_S }),
      fc.constantFrom(-TOLERANCE_S - 1, -TOLERANCE_S, -TOLERANCE_S + 1, TOLERANCE_S - 1, TOLERANCE_S, TOLERANCE_S + 1, 0),
    );
    const body = fc.oneof(
      fc.json().map((text) => ({ bytes: Buffer.from(text), contentType: 'application/json' })),
      fc.uint8Array({ maxLength: 400 }).map((bytes) => ({ bytes: Buffer.from(bytes), contentType: 'application/octet-stream' })),
    );
    const tamper = fc.constantFrom<Tamper>('none', 'none', 'flip', 'other_secret', 'truncate', 'good_among_bad', 'only_bad_list', 'id_changed', 'body_changed');
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 60 }), skew, body, tamper, fc.integer({ min: 0, max: 42 }), async (idNumber, skewS, { bytes, contentType }, how, position) => {
        const id = `msg_${idNumber}`;
        const timestamp = String(NOW.getTime() / 1000 + skewS);
        const good = sign(SECRET, id, timestamp, bytes);
        let signature = `v1,${good}`;
        let sentId = id;
        let sentBody = bytes;
        const raw = Buffer.from(good, 'base64');
        switch (how) {
          case 'flip':
            raw[position % raw.length]! ^= 1 << (position % 8);
            signature = `v1,${raw.toString('base64')}`;
            break;
          case 'other_secret':
            signature = `v1,${sign(OTHER_SECRET, id, timestamp, bytes)}`;
            break;
          case 'truncate':
            signature = `v1,${good.slice(0, position % good.length)}`;
            break;
          case 'good_among_bad':
            signature = `v1,${sign(OTHER_SECRET, id, timestamp, bytes)} v1a,${good} v1,${good}`;
            break;
          case 'only_bad_list':
            signature = `v1,${sign(OTHER_SECRET, id, timestamp, bytes)} v2,${good} v1a,${good}`;
            break;
          case 'id_changed':
            sentId = `${id}x`;
            break;
          case 'body_changed':
            sentBody = Buffer.concat([bytes, Buffer.from(' ')]);
            break;
        }
        const response = await post(url, agent, { 'content-type': contentType, 'webhook-id': sentId, 'webhook-timestamp': timestamp, 'webhook-signature': signature }, sentBody);
        expect(response.status).toBeLessThan(500);
        const shouldAccept = GENUINE.has(how) && Math.abs(skewS) <= TOLERANCE_S;
        if (shouldAccept) {
          expect([200, 202]).toContain(response.status);
          expect(response.status === 200).toBe(accepted.has(id));
          if (!accepted.has(id)) accepted.set(id, bytes);
        } else {
          expect(response.status).toBe(401);
        }
      }),
      { numRuns: 250 },
    );
    const reader = await openRawReader(db);
    try {
      const rows = await reader.query('SELECT delivery_id AS d, body AS b FROM mailroom_event');
      expect(rows).toHaveLength(accepted.size);
      for (const row of rows) expect(Buffer.from(row.b as Uint8Array).equals(accepted.get(String(row.d))!)).toBe(true);
      const [jobs] = await reader.query('SELECT count(*) AS n FROM mailroom_job');
      expect(Number(jobs!.n)).toBe(accepted.size);
    } finally {
      await reader.close();
    }
  });
});

describe('backoff and retry arithmetic', () => {
  it('never gives a delay that is negative, fractional or above the cap', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 0, max: 10_000_000 }),
        fc.integer({ min: 0, max: 100_000_000 }),
        fc.constantFrom('full' as const, 'equal' as const, 'none' as const),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, baseMs, capMs, jitter, random) => {
          const delay = computeBackoffMs(attempt, { baseMs, capMs, jitter }, () => random);
          expect(Number.isInteger(delay)).toBe(true);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(capMs);
          const policy = resolveRetryPolicy({ backoff: { baseMs, capMs, jitter } });
          expect(retryDelayMs(policy, attempt, () => random)).toBeLessThanOrEqual(capMs);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('keeps a fixed schedule within its largest step plus 20 % jitter', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1_000 }),
        fc.option(fc.array(fc.integer({ min: 0, max: 86_400_000 }), { minLength: 1, maxLength: 10 }), { nil: undefined }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, custom, random) => {
          const schedule = custom ?? STANDARD_WEBHOOKS_SCHEDULE_MS;
          const delay = scheduleDelayMs(attempt, schedule, 0.2, () => random);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(Math.ceil(Math.max(...schedule) * 1.2));
        },
      ),
      { numRuns: 2_000 },
    );
  });
});

type Command =
  | { kind: 'claim'; leaseMs: number }
  | { kind: 'complete'; pick: number }
  | { kind: 'fail'; pick: number; permanent: boolean }
  | { kind: 'handBack'; pick: number }
  | { kind: 'extend'; pick: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'rescue' };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({ kind: fc.constant('claim' as const), leaseMs: fc.integer({ min: 1_000, max: 5_000 }) }),
  fc.record({ kind: fc.constant('complete' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('fail' as const), pick: fc.nat(), permanent: fc.boolean() }),
  fc.record({ kind: fc.constant('fail' as const), pick: fc.nat(), permanent: fc.constant(false) }),
  fc.record({ kind: fc.constant('handBack' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('extend' as const), pick: fc.nat() }),
  fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 7_000 }) }),
  fc.constant({ kind: 'rescue' as const }),
);

describe.each(storeHarnesses)('attempt accounting on $name', (harness) => {
  afterEach(async () => {
    await harness.cleanup();
  });

  it.runIf(harness.isAvailable)('never charges more attempts than the limit, whatever the interleaving of claims, failures, hand-backs and rescues', async () => {
    const { store } = await harness.open();
    let round = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 4 }),
        fc.array(command, { minLength: 5, maxLength: 40 }),
        async (limits, commands) => {
          const type = `acct_${round++}`;
          let now = Date.now() + round * 86_400_000; // each run on its own stretch of clock
          const at = () => new Date(now);
          await store.jobInsertMany({
            now: at(),
            jobs: limits.map((maxAttempts) => ({ type, payloadJson: '{}', queue: 'q', priority: 0, maxAttempts, runAt: null, delayMs: 0, key: null, group: null })),
          });
          const held: ClaimedJob[] = [];
          for (const step of commands) {
            const pickHeld = (pick: number) => (held.length === 0 ? null : held.splice(pick % held.length, 1)[0]!);
            switch (step.kind) {
              case 'claim':
                held.push(...(await store.jobClaim({ workerId: 'w', types: [type], queues: null, limit: 2, leaseMs: step.leaseMs, now: at() })));
                for (const job of held) expect(job.attempts).toBeLessThanOrEqual(job.maxAttempts);
                break;
              case 'complete': {
                const job = pickHeld(step.pick);
                if (job) await store.jobFinishMany({ finishes: asDone([job]), now: at() });
                break;
              }
              case 'fail': {
                const job = pickHeld(step.pick);
                // As the worker decides: park when permanent or out of attempts, else retry.
                const park = step.permanent || job === null || job.attempts >= job.maxAttempts;
                if (job) {
                  await store.jobFinishMany({
                    now: at(),
                    finishes: asFailed([{ id: job.id, leaseToken: job.leaseToken, error: 'x', outcome: 'failed', retryDelayMs: park ? null : 0, deadReason: step.permanent ? 'permanent' : 'exhausted' }]),
                  });
                }
                break;
              }
              case 'handBack': {
                const job = pickHeld(step.pick);
                if (job) await store.jobFinishMany({ finishes: asHandedBack([job]), now: at() });
                break;
              }
              case 'extend':
                if (held.length > 0) await store.jobExtendLease({ leases: [held[step.pick % held.length]!], leaseMs: 2_000, now: at() });
                break;
              case 'advance':
                now += step.ms;
                break;
              case 'rescue':
                await store.jobRescue({ now: at() });
                break;
            }
            for (const job of await store.jobList({ type, limit: 100 })) {
              expect(job.attempts).toBeGreaterThanOrEqual(0);
              expect(job.attempts).toBeLessThanOrEqual(job.maxAttempts);
              if (job.status === 'pending') expect(job.attempts).toBeLessThan(job.maxAttempts);
            }
          }
        },
      ),
      { numRuns: harness.name === 'sqlite' ? 150 : 60 },
    );
  });
});

