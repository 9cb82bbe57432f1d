// PostgreSQL-only: the session settings of the store's two pools. Worker bookkeeping
// commits without waiting for the WAL flush and plans its statements once, without JIT; the
// acknowledgement pool keeps the server's settings. A URL's own `options` (session
// settings) apply to both pools without displacing the bookkeeping pool's: node-postgres
// lets a URL parameter replace the config's, which once dropped them silently. SQLite has
// no sessions or pools, so this is not in the conformance suite.

import { afterEach, describe, expect, it } from 'vitest';
import type { PoolRunner } from '../../src/store/postgres/query-runner.js';
import { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { freshSchemaName, postgresHarness, urlWithSchema } from '../harness/postgres.js';

/** The store's two pools, each through the runner that holds it. */
interface StorePools {
  readonly pool: PoolRunner;
  readonly bookkeepingPool: PoolRunner;
}

const SETTINGS = ['synchronous_commit', 'plan_cache_mode', 'jit', 'statement_timeout'] as const;

async function sessionSettings(pool: PoolRunner): Promise<Record<string, string>> {
  const rows = await pool.run('SELECT name, setting FROM pg_settings WHERE name = ANY($1::text[])', [[...SETTINGS]]);
  return Object.fromEntries(rows.map((row) => [String(row.name), String(row.setting)]));
}

const opened: PostgresStore[] = [];

afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
});

async function openWithUrl(url: string): Promise<StorePools> {
  const store = await PostgresStore.open({ url });
  opened.push(store);
  const runners = store as unknown as { poolRunner: PoolRunner; bookkeepingRunner: PoolRunner };
  return { pool: runners.poolRunner, bookkeepingPool: runners.bookkeepingRunner };
}

describe.skipIf(!postgresHarness.isAvailable)('PostgreSQL session settings per pool', () => {
  it('runs worker bookkeeping with synchronous_commit=off and generic plans, acknowledgements with the defaults', async () => {
    const { pool, bookkeepingPool } = await openWithUrl(urlWithSchema(freshSchemaName()));
    expect(await sessionSettings(bookkeepingPool)).toMatchObject({ synchronous_commit: 'off', plan_cache_mode: 'force_generic_plan', jit: 'off' });
    expect(await sessionSettings(pool)).toMatchObject({ synchronous_commit: 'on', plan_cache_mode: 'auto' });
  });

  it("applies the URL's own options to both pools and keeps the bookkeeping pool's settings", async () => {
    const url = new URL(urlWithSchema(freshSchemaName()));
    url.searchParams.set('options', '-c statement_timeout=4321 -c synchronous_commit=on');
    const { pool, bookkeepingPool } = await openWithUrl(url.toString());
    expect(await sessionSettings(pool)).toMatchObject({ synchronous_commit: 'on', plan_cache_mode: 'auto', statement_timeout: '4321' });
    expect(await sessionSettings(bookkeepingPool)).toEqual({
      synchronous_commit: 'off',
      plan_cache_mode: 'force_generic_plan',
      jit: 'off',
      statement_timeout: '4321',
    });
  });
  it('applies PGOPTIONS to both pools when the URL has no options, as node-postgres would', async () => {
    const saved = process.env.PGOPTIONS;
    process.env.PGOPTIONS = '-c statement_timeout=2345';
    try {
      const { pool, bookkeepingPool } = await openWithUrl(urlWithSchema(freshSchemaName()));
      expect(await sessionSettings(pool)).toMatchObject({ synchronous_commit: 'on', statement_timeout: '2345' });
      expect(await sessionSettings(bookkeepingPool)).toMatchObject({ synchronous_commit: 'off', jit: 'off', statement_timeout: '2345' });
    } finally {
      if (saved === undefined) delete process.env.PGOPTIONS;
      else process.env.PGOPTIONS = saved;
    }
  });
});
