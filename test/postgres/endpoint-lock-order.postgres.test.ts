// PostgreSQL-only: the order in which an endpoint's two rows are locked. A batch of
// delivery records locks the endpoints' health rows, then the row of an endpoint it
// disables (a 410, a failure streak). An enable, a new URL and a removal write both rows;
// had they locked the endpoint first, one of them meeting such a batch would wait on it
// while it waited on them, and PostgreSQL would end one as a deadlock. Here another
// session holds the health row, as the batch would: the call must wait there, with the
// endpoint's row still free for the batch to take. SQLite runs one writer at a time.

import { afterEach, describe, expect, it } from 'vitest';
import type { Mailroom } from '../../src/mailroom.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { connectClient, postgresHarness } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';

const SECRET = 'whsec_b3JpZ2luYWwgc2VjcmV0IG9mIHRoZSB0ZXN0';

const calls: Record<string, (mr: Mailroom, id: string) => Promise<unknown>> = {
  'an enable': (mr, id) => mr.store.endpointSetEnabled({ id, enabled: true, reason: null }),
  'a new URL': (mr, id) => mr.store.endpointUpdate({ id, url: 'http://127.0.0.1:9/moved' }),
  'a removal': (mr, id) => mr.store.endpointRemove({ id }),
};

describe.skipIf(!postgresHarness.isAvailable)('PostgreSQL: an endpoint call that writes its health row', () => {
  afterEach(() => closeTestMailrooms(postgresHarness));

  it.each(Object.keys(calls))('%s waits on the health row before it locks the endpoint row', async (name) => {
    const { mr, url } = await openTestMailroom(postgresHarness);
    const schema = new URL(url).searchParams.get('schema')!;
    const id = (await mr.store.endpointAdd({ tenant: 'acme', url: 'http://127.0.0.1:9/x', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: SECRET, addedBy: 'operator' })).id;
    await mr.store.endpointSetEnabled({ id, enabled: false, reason: 'paused for the test' });
    const holder = await connectClient();
    const probe = await connectClient();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${schema}".mailroom_endpoint_health WHERE endpoint_id = $1 FOR UPDATE`, [id]);
      const { rows: [{ pid: holderPid }] } = await holder.query('SELECT pg_backend_pid() AS pid');
      const call = calls[name]!(mr, id);
      await waitFor(
        async () => {
          const { rows } = await probe.query('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [holderPid]);
          return rows[0].n >= 1;
        },
        { timeoutMs: 5_000, description: `${name} to wait on the health row` },
      );
      // The batch's next step: the endpoint's row, free while the call waits.
      const endpointRow = await probe.query(`SELECT id FROM "${schema}".mailroom_endpoint WHERE id = $1 FOR UPDATE NOWAIT`, [id]);
      expect(endpointRow.rows).toHaveLength(1);
      await holder.query('COMMIT');
      await call;
      const endpoint = await mr.store.endpointGet({ id });
      if (name === 'a removal') expect(endpoint).toBeNull();
      else if (name === 'an enable') expect(endpoint?.enabled).toBe(true);
      else expect(endpoint?.url).toBe('http://127.0.0.1:9/moved');
    } finally {
      await holder.query('ROLLBACK').catch(() => undefined);
      await holder.end();
      await probe.end();
    }
  });
});
