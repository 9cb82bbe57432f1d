// SQLite only: the way to make the store refuse a write on demand is another connection
// holding the write lock (BEGIN IMMEDIATE). PostgreSQL has no equivalent short of stopping
// the server, which the tests must never do.

import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { sqliteHarness } from '../harness/sqlite.js';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { closeAll, countRows, openIngressMailroom, postHook, startIngress } from './ingress-kit.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('webhook ingress when SQLite is locked by another connection', () => {
  const opened: SqliteStore[] = [];
  afterEach(async () => {
    await closeAll(sqliteHarness);
    for (const store of opened.splice(0)) await store.close();
  });

  it('answers 503 with Retry-After and writes nothing, then accepts the retry once the lock is gone', async () => {
    const harnessStore = await sqliteHarness.open();
    // A second store with a short lock deadline on the harness's file; the harness's own
    // connection plays the other process holding the write lock.
    const impatient = new SqliteStore({ path: harnessStore.url.slice('sqlite:'.length), lockDeadlineMs: 200 });
    opened.push(impatient);
    const { mr } = await openIngressMailroom({ ...sqliteHarness, open: async () => ({ ...harnessStore, store: impatient }) });
    const { url } = await startIngress(mr, { sources: { s: { provider: 'standard', secrets: [SECRET], tasks: ['t'] } } });

    const body = Buffer.from(JSON.stringify({ type: 'x.y' }));
    const at = new Date();
    const headers = {
      'content-type': 'application/json',
      'webhook-id': 'msg_locked',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': new StandardWebhook(SECRET).sign('msg_locked', at, body.toString('utf8')),
    };

    const locker = (harnessStore.store as SqliteStore).database;
    locker.exec('BEGIN IMMEDIATE');
    let refused;
    try {
      refused = await postHook(url, 's', body, headers);
    } finally {
      locker.exec('ROLLBACK');
    }
    expect(refused.status).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.json.error.code).toBe('MR_ERR_STORE_UNAVAILABLE');
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });

    const retried = await postHook(url, 's', body, headers);
    expect(retried.status).toBe(202);
    expect(await countRows(harnessStore)).toEqual({ events: 1, jobs: 1 });
  });
});
