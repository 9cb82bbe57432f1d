// PostgreSQL only: a pooled connection dies while Mailroom holds it (a server restart or
// pg_terminate_backend between two statements of a transaction). node-postgres then emits
// 'error' on the client, and pg-pool removes its own listener while a client is checked
// out: without one of ours that event was an uncaught exception that killed the whole
// process (found by restart.postgres.test.ts: `mailroom serve` died with the server). The
// statement must fail with StoreUnavailableError instead, and the store must carry on.

import { afterEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/core/errors.js';
import { connectClient, freshSchemaName, isPostgresAvailable, openPostgresStore, postgresHarness } from '../harness/postgres.js';

describe('a PostgreSQL connection lost while checked out', () => {
  afterEach(async () => {
    await postgresHarness.cleanup();
  });

  it.runIf(isPostgresAvailable)('fails the transaction with StoreUnavailableError instead of crashing the process', async () => {
    const store = await openPostgresStore(freshSchemaName());
    await store.migrate();
    const killer = await connectClient();
    try {
      const outcome = await store
        .transaction(async (tx) => {
          const client = tx.client as { query(sql: string): Promise<{ rows: Array<{ pid: number }> }>; once(name: string, fn: () => void): void };
          const [{ pid }] = (await client.query('SELECT pg_backend_pid() AS pid')).rows as [{ pid: number }];
          const ended = new Promise<void>((resolve) => client.once('end', resolve));
          await killer.query('SELECT pg_terminate_backend($1)', [pid] as never);
          await ended; // the server's FATAL and the socket's end arrive while we hold the client
          // Mailroom's own next statement on the dead connection.
          return tx.jobInsertMany({
            jobs: [{ type: 'after_loss', payloadJson: '{}', queue: 'default', priority: 0, maxAttempts: 1, runAt: null, delayMs: 0, key: null, group: null }],
          });
        })
        .then(
          () => 'committed',
          (error: unknown) => error,
        );
      expect(outcome).toBeInstanceOf(StoreUnavailableError);
      // The broken connection was dropped, not handed to the next caller; nothing committed.
      await expect(store.ping()).resolves.toBeUndefined();
      expect(await store.jobList({ type: 'after_loss' })).toEqual([]);
    } finally {
      await killer.end();
    }
  });
});
