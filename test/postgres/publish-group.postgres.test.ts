// PostgreSQL-only: keyless publishes asked for in one turn of the event loop share one
// transaction (postgres-store.ts, publishGrouped). What the shared suite cannot show: a
// publish whose data the server refuses fails alone; the others of its group are stored.
// (SQLite runs each publish in a savepoint of a shared commit, and accepts what PostgreSQL
// refuses here.)
import { afterEach, describe, expect, it } from 'vitest';
import { jobInsert } from '../harness/factory.js';
import { postgresHarness } from '../harness/postgres.js';

const publish = (tenant: string, i: number) => ({ tenant, type: 'invoice.paid', key: null, job: jobInsert({ type: 'deliver' }), payloadJson: JSON.stringify({ i }) });

describe.skipIf(!postgresHarness.isAvailable)('postgres grouped publishes', () => {
  afterEach(() => postgresHarness.cleanup());

  it('fails only the publish whose data the server refuses, and stores the rest of its group', async () => {
    const { store } = await postgresHarness.open();
    await store.endpointAdd({ tenant: 'acme', url: 'https://hooks.example.com/in', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', addedBy: 'operator' });
    // A NUL character is not text to PostgreSQL (SQLSTATE 22021): the group's insert fails.
    const settled = await Promise.allSettled([0, 1, 2, 3, 4].map((i) => store.messagePublish(publish(i === 2 ? 'ac\u0000me' : 'acme', i))));
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
    const stored = await store.messageList({ tenant: 'acme' });
    expect(stored.map((message) => message.payload).sort((a, b) => (a as { i: number }).i - (b as { i: number }).i)).toEqual([{ i: 0 }, { i: 1 }, { i: 3 }, { i: 4 }]);
    for (const result of settled) {
      if (result.status === 'fulfilled') expect(result.value.deliveries.map((delivery) => delivery.status)).toEqual(['pending']);
    }
    expect((await store.jobStats({})).byQueue.default?.pending).toBe(4);
  });
});
