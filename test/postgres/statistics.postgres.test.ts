// PostgreSQL only: the store analyses its job table once a backlog has been written, so
// claims are planned for the rows there are. Enqueues counted toward it from the start; a
// store that only published (outgoing webhooks) never analysed, and the limited claim's
// generic plan, costed for an empty table, sorted every pending delivery on each claim.

import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Mailroom } from '../../src/mailroom.js';
import { postgresHarness } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';

const PUBLISHES = 1_000;

describe.skipIf(!postgresHarness.isAvailable)('job table statistics on postgres', () => {
  let mr: Mailroom | null = null;
  afterEach(async () => {
    await mr?.close();
    mr = null;
    await postgresHarness.cleanup();
  });

  it('are gathered once a store has published 1,000 deliveries', async () => {
    const opened = await postgresHarness.open();
    mr = await Mailroom.open({ store: opened.store, logger: pino({ level: 'silent' }), endpoints: { allowlist: ['127.0.0.1'] } });
    await mr.endpoints.add({ tenant: 'acme', url: 'http://127.0.0.1:9/hooks' });
    const reltuples = async () => Number((await opened.query!("SELECT reltuples FROM pg_class WHERE oid = 'mailroom_job'::regclass"))[0]?.reltuples);
    expect(await reltuples()).toBeLessThanOrEqual(0);
    for (let i = 0; i < PUBLISHES; i++) await mr.publish('invoice.paid', { i }, { tenant: 'acme' });
    await waitFor(async () => (await reltuples()) >= PUBLISHES * 0.9, { timeoutMs: 10_000, description: 'the job table to be analysed' });
  }, 60_000);
});
