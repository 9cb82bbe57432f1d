// PostgreSQL-only: close() and the calls in flight. The pool stops handing out connections
// when it ends, so a call still waiting for one was left waiting until its connect timed
// out; close now lets what is in flight finish (those waiting for a connection up to a
// grace period), and everything after it fails with StoreClosedError. (SQLite's calls run to their end on its one connection.)
import { afterEach, describe, expect, it } from 'vitest';
import { jobInsert } from '../harness/factory.js';
import { postgresHarness } from '../harness/postgres.js';

const publish = (tenant: string, i: number) => ({ tenant, type: 'invoice.paid', key: null, job: jobInsert({ type: 'deliver' }), payloadJson: JSON.stringify({ i }) });

describe.skipIf(!postgresHarness.isAvailable)('postgres store close', () => {
  afterEach(() => postgresHarness.cleanup());

  it('lets the calls in flight finish, and fails the ones after it, so none is left pending', async () => {
    const { store } = await postgresHarness.open();
    await store.endpointAdd({ tenant: 'acme', url: 'https://hooks.example.com/in', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', addedBy: 'operator' });
    // Four publishes asked for at once (the first goes alone, waiting for a connection; the
    // others wait for the turn's end), then close: the first was left waiting until its
    // connect timed out (10 s), and the others failed as closed.
    const asked = [0, 1, 2, 3].map((i) => store.messagePublish(publish('acme', i)));
    const startedAt = Date.now();
    const closed = store.close();
    const settled = await Promise.allSettled(asked);
    await closed;
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(Date.now() - startedAt).toBeLessThan(5_000);
    await expect(store.messagePublish(publish('acme', 4))).rejects.toMatchObject({ code: 'MR_ERR_CLOSED' });
  });
});
