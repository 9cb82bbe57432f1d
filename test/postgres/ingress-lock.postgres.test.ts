// PostgreSQL-only: a table lock held by another session (a DBA's LOCK TABLE, a long ALTER)
// must not hold a webhook, and a pool connection with it, until the sender gives up. As on
// SQLite (sqlite-faults.sqlite.test.ts), ingress answers 503 with Retry-After once the lock
// deadline passes and stores nothing; after the lock is released the retry stores one
// event. A caller's own statements keep PostgreSQL's waiting: only ingress is bounded.

import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/validate-config.js';
import { createIngressServer } from '../../src/ingress/server.js';
import { Mailroom } from '../../src/mailroom.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { SECRET, boundedAgent, postSigned } from '../faults/kit.js';
import { connectClient, freshSchemaName, isPostgresAvailable, PG_URL } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';

const LOCK_DEADLINE_MS = 400;
const silent = pino({ level: 'silent' });
const cleanups: Array<() => Promise<unknown>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
});

describe.skipIf(!isPostgresAvailable)('PostgreSQL ingress under a table lock', () => {
  it('answers 503 with Retry-After after the lock deadline, stores nothing, and stores one event once the lock is gone', async () => {
    const schema = freshSchemaName();
    const store = await PostgresStore.open({ url: PG_URL, schema, lockDeadlineMs: LOCK_DEADLINE_MS });
    const mr = await Mailroom.open({ store, logger: silent });
    const ingress = createIngressServer({ mr, logger: silent, config: validateConfig({ sources: { s: { provider: 'standard', secrets: [SECRET], tasks: ['hook'] } } }) });
    const url = await ingress.listen(0, '127.0.0.1');
    const agent = boundedAgent(4);
    const dba = await connectClient();
    cleanups.push(
      async () => dba.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).finally(() => dba.end()),
      () => store.close(),
      () => mr.close(),
      () => ingress.close({ timeoutMs: 1_000 }),
      async () => agent.destroy(),
    );

    await dba.query('BEGIN');
    await dba.query(`LOCK TABLE "${schema}".mailroom_event, "${schema}".mailroom_job IN ACCESS EXCLUSIVE MODE`);
    const startedAt = Date.now();
    const refused = await postSigned(url, 'locked_1', agent, 's', 10_000);
    const waitedMs = Date.now() - startedAt;
    expect(refused.status).toBe(503);
    expect(refused.retryAfter).toBe('1');
    expect(waitedMs).toBeGreaterThanOrEqual(LOCK_DEADLINE_MS - 50);
    expect(waitedMs).toBeLessThan(LOCK_DEADLINE_MS + 3_000);
    // The application's own statements still wait as PostgreSQL waits: not bounded by the deadline.
    let enqueueState = 'waiting';
    const enqueue = mr.enqueue('report', {}).then(
      () => (enqueueState = 'done'),
      () => (enqueueState = 'failed'),
    );
    // Its session is seen waiting on the lock for three deadlines, and it has not given up
    // (clock_timestamp: the DBA's now() stands still inside its transaction).
    await waitFor(
      async () => {
        const { rows } = await dba.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock' AND clock_timestamp() - query_start > make_interval(secs => $2)",
          [`mailroom:${schema}`.slice(0, 63), (3 * LOCK_DEADLINE_MS) / 1_000],
        );
        return rows[0].n > 0 || enqueueState !== 'waiting';
      },
      { timeoutMs: 10_000, description: 'the enqueue waiting on the lock for three deadlines' },
    );
    expect(enqueueState).toBe('waiting');
    await dba.query('ROLLBACK');
    await enqueue;
    expect(enqueueState).toBe('done');

    expect((await postSigned(url, 'locked_1', agent)).status).toBe(202);
    expect((await postSigned(url, 'locked_1', agent)).status).toBe(200);
    const { rows } = await dba.query(`SELECT count(*)::int AS n FROM "${schema}".mailroom_event`);
    expect(rows[0].n).toBe(1);
    console.log(`[faults] postgres table lock held by another session: 503 after ${waitedMs} ms (deadline ${LOCK_DEADLINE_MS}), Retry-After ${refused.retryAfter}, retry stored 1`);
  });
});
