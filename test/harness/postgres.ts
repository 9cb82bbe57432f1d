// PostgreSQL harness: one fresh schema (`mr_t_<random>`) per open(), migrated, dropped in
// cleanup(). The server is PG_URL (default postgres://postgres@127.0.0.1:5432/test).
// Availability is probed once, at import (top-level await): unreachable outside CI, the
// PostgreSQL suites skip with one loud line; under CI=true they run and fail, because a
// CI that silently skips its PostgreSQL half proves nothing.

import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { POSTGRES_CAPABILITIES, PostgresStore } from '../../src/store/postgres/postgres-store.js';
import type { Store } from '../../src/store/store.js';
import type { HarnessStore, StoreHarness } from './store-harness.js';

export const PG_URL = process.env.PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const IS_CI = process.env.CI === 'true';
/** 3 s: a local server answers in milliseconds; a missing one refuses at once or times out here. */
const PROBE_TIMEOUT_MS = 3_000;

async function probe(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: PROBE_TIMEOUT_MS });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return error instanceof Error ? error.message || error.name : String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const unreachable = await probe();
if (unreachable !== null) {
  const where = PG_URL.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
  if (IS_CI) {
    console.error(`PostgreSQL unreachable at ${where} (${unreachable}): CI=true, so the PostgreSQL suites will FAIL`);
  } else {
    console.warn(`PostgreSQL unreachable at ${where} (${unreachable}): PostgreSQL suites SKIPPED`);
  }
}

/** True when PostgreSQL suites should run (reachable, or CI where unreachable must fail). */
export const isPostgresAvailable = unreachable === null || IS_CI;

const stores: Store[] = [];
const schemas: string[] = [];

/** A schema name no other test (or test process) will pick. */
export function freshSchemaName(): string {
  return `mr_t_${randomBytes(6).toString('hex')}`;
}

/** `PG_URL` with `?schema=` set, the form a second process would be given. */
export function urlWithSchema(schema: string): string {
  const url = new URL(PG_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
}

/** Open a store on `schema` (not migrated); closed by cleanup(). */
export async function openPostgresStore(schema: string, poolSize?: number): Promise<PostgresStore> {
  if (!schemas.includes(schema)) schemas.push(schema);
  const store = await PostgresStore.open({ url: PG_URL, schema, poolSize });
  stores.push(store);
  return store;
}

/** A plain client on PG_URL, for tests that act as "the application" or the DBA. */
export async function connectClient(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: PG_URL });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}

/** Runs `fn` on a fresh client whose search_path is `schema` (unqualified names resolve there). */
async function withSchemaClient<T>(schema: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await connectClient();
  try {
    await client.query(`SET search_path TO "${schema}"`);
    return await fn(client);
  } finally {
    await client.end();
  }
}

async function dropSchemas(names: string[]): Promise<void> {
  if (names.length === 0) return;
  const client = await connectClient();
  try {
    for (const name of names) await client.query(`DROP SCHEMA IF EXISTS "${name}" CASCADE`);
  } finally {
    await client.end();
  }
}

export const postgresHarness: StoreHarness = {
  name: 'postgres',
  capabilities: POSTGRES_CAPABILITIES,
  isAvailable: isPostgresAvailable,
  async open(): Promise<HarnessStore> {
    const opened = await postgresHarness.openUnmigrated();
    await opened.store.migrate();
    return opened;
  },
  async openUnmigrated(): Promise<HarnessStore> {
    const schema = freshSchemaName();
    const store = await openPostgresStore(schema);
    return {
      store,
      url: urlWithSchema(schema),
      async openAnother() {
        return openPostgresStore(schema);
      },
      async exec(sql: string) {
        await withSchemaClient(schema, (client) => client.query(sql));
      },
      async query(sql: string) {
        return withSchemaClient(schema, async (client) => (await client.query(sql)).rows);
      },
    };
  },
  async cleanup() {
    for (const store of stores.splice(0)) await store.close();
    await dropSchemas(schemas.splice(0));
  },
};
