// Fault: kill -9 a worker process in the middle of outgoing deliveries (1,000 messages to 3
// loopback receivers that verify each request with `standardwebhooks` and answer after a
// few milliseconds, so many requests are in flight), then start another. Every delivery
// must end `delivered` with its job done, every receiver must have every message, and an
// endpoint's health may count no more successes than its receiver got requests: a success
// is recorded only for a request that arrived (a re-send after the kill is a duplicate,
// which at-least-once allows, and the receiver dedupes by webhook-id).

import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import pino from 'pino';
import { Mailroom } from '../../src/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';
import { startVerifyingReceiver } from '../outgoing/outgoing-kit.js';
import type { VerifyingReceiver } from '../outgoing/outgoing-kit.js';
import { cleanupFaults, startFaultWorker, tempDir } from './kit.js';

const MESSAGES = 1_000;
const LEASE_MS = 2_000;

describe.each(storeHarnesses)('kill -9 of a worker delivering outgoing webhooks on $name', (harness) => {
  const receivers: VerifyingReceiver[] = [];
  let opened: Mailroom | undefined;
  afterEach(async () => {
    cleanupFaults();
    for (const receiver of receivers.splice(0)) await receiver.close();
    await opened?.close({ timeoutMs: 2_000 });
    opened = undefined;
    await harness.cleanup();
  });

  it.runIf(harness.isAvailable)(
    'delivers every message to every endpoint after a SIGKILL mid-drain, and counts no success its receiver did not get',
    async () => {
      const { store, url } = await harness.open();
      const mr = await Mailroom.open({ store, logger: pino({ level: 'silent' }), endpoints: { allowlist: ['127.0.0.1'] } });
      opened = mr;
      const endpoints: Array<{ id: string; receiver: VerifyingReceiver }> = [];
      for (let i = 0; i < 3; i++) {
        const receiver = await startVerifyingReceiver();
        // A few milliseconds per answer, so the kill finds requests in flight.
        receiver.respond = (_request, res) => void setTimeout(() => res.writeHead(204).end(), 2 + Math.floor(Math.random() * 20));
        receivers.push(receiver);
        const endpoint = await mr.endpoints.add({ tenant: 'acme', url: receiver.url });
        receiver.secrets.push(endpoint.secret);
        endpoints.push({ id: endpoint.id, receiver });
      }
      const messageIds: string[] = [];
      for (let i = 0; i < MESSAGES; i++) messageIds.push((await mr.publish('invoice.paid', { i }, { tenant: 'acme' })).message.id);

      const options = {
        db: url,
        ledger: join(tempDir(), 'ledger.txt'),
        concurrency: 30,
        leaseMs: LEASE_MS,
        env: { FAULT_ENDPOINTS_ALLOWLIST: '127.0.0.1' },
      };
      const first = await startFaultWorker(options);
      const received = () => endpoints.reduce((sum, { receiver }) => sum + receiver.received.length, 0);
      await waitFor(() => received() >= 600, { timeoutMs: 30_000, intervalMs: 10, description: 'the first worker to be delivering' });
      first.kill('SIGKILL');
      await first.exited;
      const atKill = received();
      expect(atKill).toBeLessThan(3 * MESSAGES);

      await startFaultWorker(options);
      await waitFor(
        async () => {
          const { pending, running } = (await mr.stats()).byStatus;
          return pending === 0 && running === 0;
        },
        { timeoutMs: 60_000, intervalMs: 50, description: 'every deliver job to be terminal' },
      );

      const stats = await mr.stats();
      expect(stats.byStatus).toMatchObject({ done: 3 * MESSAGES, dead: 0 });
      for (const { id, receiver } of endpoints) {
        // Every request verified, and every message arrived at least once.
        expect(receiver.received.every((request) => request.verifiedWith !== null)).toBe(true);
        const got = new Set(receiver.received.map((request) => String(request.headers['webhook-id'])));
        expect([...messageIds].filter((messageId) => !got.has(messageId))).toEqual([]);
        const health = await mr.endpoints.health(id);
        expect(health).toMatchObject({ backlog: 0, failures: 0 });
        expect(health.successes).toBeGreaterThanOrEqual(MESSAGES);
        expect(health.successes).toBeLessThanOrEqual(receiver.received.length);
        let after: string | undefined;
        let delivered = 0;
        for (;;) {
          const page = await mr.deliveries.list({ endpointId: id, limit: 500, ...(after ? { after } : {}) });
          if (page.length === 0) break;
          for (const delivery of page) expect(delivery.status).toBe('delivered');
          delivered += page.length;
          after = page[page.length - 1]!.id;
        }
        expect(delivered).toBe(MESSAGES);
      }
      console.log(`[outgoing kill -9 ${harness.name}] received at the kill ${atKill}; in all ${received()} requests for ${3 * MESSAGES} deliveries`);
    },
    120_000,
  );
});
