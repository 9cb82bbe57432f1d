// PostgreSQL-only: in a rolling deploy a newer process may apply a migration declared
// compatible with older code (one that adds a column). The older process's connections
// hold prepared statements that read `*` from that table; PostgreSQL refuses to run them
// again ("cached plan must not change result type", 0A000) rather than return a different
// row. The statement ran nothing, so the store drops that connection and runs the work
// again on a fresh one, instead of failing every publish or event read on it. SQLite has
// no prepared statements shared across processes, so this is not in the conformance suite.

import { afterEach, describe, expect, it } from 'vitest';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { connectClient, postgresHarness } from '../harness/postgres.js';

describe.skipIf(!postgresHarness.isAvailable)('PostgreSQL prepared statements after another process adds a column', () => {
  afterEach(() => closeTestMailrooms(postgresHarness));

  it('publishes and lists messages through a fresh connection instead of failing on a stale plan', async () => {
    const { mr, url } = await openTestMailroom(postgresHarness);
    const schema = new URL(url).searchParams.get('schema')!;
    // Sequential calls reuse the pool's last idle connection: these prepare the message
    // insert (in the publish's transaction, RETURNING *) and the list (SELECT *) on it.
    for (let i = 0; i < 3; i++) await mr.publish('order.paid', { i }, { tenant: 'acme' });
    expect(await mr.messages.list({ tenant: 'acme' })).toHaveLength(3);

    const dba = await connectClient();
    try {
      await dba.query(`ALTER TABLE "${schema}".mailroom_message ADD COLUMN added_by_a_newer_version text`);
    } finally {
      await dba.end();
    }

    const published = await mr.publish('order.paid', { i: 3 }, { tenant: 'acme' });
    expect(published.message.type).toBe('order.paid');
    const listed = await mr.messages.list({ tenant: 'acme' });
    expect(listed.map((message) => message.payload)).toEqual([{ i: 0 }, { i: 1 }, { i: 2 }, { i: 3 }]);
  });
});
