// PostgreSQL-only: a URL naming a database the server does not have is a store that is
// unavailable (MR_ERR_STORE_UNAVAILABLE, as a server that is down), and the message says
// which database, not "refused a statement".

import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Mailroom } from '../../src/mailroom.js';
import { PG_URL, postgresHarness } from '../harness/postgres.js';

describe.skipIf(!postgresHarness.isAvailable)('PostgreSQL refusing the connection', () => {
  it('names the missing database and is a store unavailable', async () => {
    const url = new URL(PG_URL);
    url.pathname = '/mailroom_no_such_database';
    await expect(Mailroom.open({ db: url.toString(), logger: pino({ level: 'silent' }) })).rejects.toMatchObject({
      code: 'MR_ERR_STORE_UNAVAILABLE',
      message: expect.stringContaining('database "mailroom_no_such_database" does not exist'),
    });
  });
});
