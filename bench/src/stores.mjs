// Fresh stores for every measurement: a new SQLite file in a temp dir, a new PostgreSQL
// database (dropped afterwards), or a FLUSHDB of a dedicated Redis db index. History
// templates (1,000,000 done + 100,000 dead rows) are seeded once per invocation and copied
// per run (file copy / CREATE DATABASE … TEMPLATE), so every run still starts fresh.

import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import Redis from 'ioredis';

export const PG_ADMIN_URL = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
export const REDIS_DB = Number(process.env.BENCH_REDIS_DB ?? 13);

const tmpRoot = mkdtempSync(join(tmpdir(), 'mailroom-bench-'));
let seq = 0;
const PREFIX = `mrbench_${process.pid}_`;
const created = new Set();

function pgUrl(db) {
  const u = new URL(PG_ADMIN_URL);
  u.pathname = `/${db}`;
  return u.toString();
}

async function admin(sql) {
  const c = new pg.Client({ connectionString: PG_ADMIN_URL });
  await c.connect();
  try {
    return await c.query(sql);
  } finally {
    await c.end();
  }
}

/** A fresh location for `store`; `template` is a location made by freshTemplate. */
export async function fresh(store, template) {
  const id = ++seq;
  if (store === 'sqlite') {
    const path = join(tmpRoot, `run${id}.db`);
    if (template) copyFileSync(template.path, path);
    return { path };
  }
  if (store === 'postgres') {
    const name = `${PREFIX}${id}`;
    await admin(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template.name} STRATEGY FILE_COPY` : ''}`);
    created.add(name);
    return { url: pgUrl(name), name };
  }
  if (store === 'redis') {
    const r = new Redis({ host: '127.0.0.1', port: 6379, db: REDIS_DB, lazyConnect: true });
    await r.connect();
    await r.flushdb();
    await r.quit();
    return { db: REDIS_DB };
  }
  throw new Error(`unknown store ${store}`);
}

export async function drop(loc) {
  if (loc.path) {
    for (const suffix of ['', '-wal', '-shm']) rmSync(loc.path + suffix, { force: true });
  } else if (loc.name) {
    await admin(`DROP DATABASE IF EXISTS ${loc.name} WITH (FORCE)`);
    created.delete(loc.name);
  } else if (loc.db !== undefined) {
    const r = new Redis({ host: '127.0.0.1', port: 6379, db: loc.db, lazyConnect: true });
    await r.connect();
    await r.flushdb();
    await r.quit();
  }
}

export async function cleanupAll() {
  for (const name of [...created]) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  rmSync(tmpRoot, { recursive: true, force: true });
}

// ---------------------------------------------------------------- history seeding

const DONE = 1_000_000;
const DEAD = 100_000;

/**
 * Seed `done` and `dead` rows with raw SQL into a store whose schema the system already
 * created (the caller ran a `prepare` with n=0 first). Mailroom's PostgreSQL counter
 * triggers fire; its SQLite store keeps counters from its own statements, so the SQLite
 * seeding adds the seeded rows to mailroom_queue_count itself, and stats() stays right.
 */
export async function seedHistory(system, loc, { done = DONE, dead = DEAD } = {}) {
  if (system.startsWith('mailroom') && loc.path) return seedMailroomSqlite(loc.path, done, dead);
  if (system === 'mailroom-pg') return seedMailroomPg(loc.url, done, dead);
  if (system === 'plainjob') return seedPlainjob(loc.path, done, dead);
  throw new Error(`no history seeding for ${system}`);
}

async function sqlite(path) {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF'); // seeding only; the measured run reopens with the system's own settings
  return db;
}

async function seedMailroomSqlite(path, done, dead) {
  const db = await sqlite(path);
  const t = Date.now() - 86_400_000;
  db.exec('BEGIN');
  db.prepare(
    `WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < ?)
     INSERT INTO mailroom_job (queue, type, status, payload, run_at, attempts, max_attempts, created_at, started_at, finished_at)
     SELECT 'default', 'bench', 'done', '{"i":0}', ? + x, 1, 5, ? + x, ? + x, ? + x + 1 FROM s`,
  ).run(done, t, t, t, t);
  db.prepare(
    `WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < ?)
     INSERT INTO mailroom_job (queue, type, status, payload, run_at, attempts, max_attempts, last_error, dead_reason, created_at, started_at, finished_at)
     SELECT 'default', 'bench', 'dead', '{"i":0}', ? + x, 5, 5, 'Error: boom', 'exhausted', ? + x, ? + x, ? + x + 1 FROM s`,
  ).run(dead, t, t, t, t);
  const count = db.prepare(
    `INSERT INTO mailroom_queue_count (queue, status, n) VALUES ('default', ?, ?)
     ON CONFLICT (queue, status) DO UPDATE SET n = n + excluded.n`,
  );
  count.run('done', done);
  count.run('dead', dead);
  db.exec('COMMIT');
  db.exec('ANALYZE');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

async function seedMailroomPg(url, done, dead) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const schema = (await c.query(`SELECT nspname FROM pg_namespace WHERE EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = nspname AND tablename = 'mailroom_job')`)).rows[0].nspname;
    const q = (sql) => c.query(sql.replaceAll('$S', `"${schema}"`));
    await q(`INSERT INTO $S.mailroom_job (queue, type, status, payload, run_at, attempts, max_attempts, created_at, started_at, finished_at)
             SELECT 'default', 'bench', 'done', '{"i":0}', t, 1, 5, t, t, t + interval '1 ms'
             FROM (SELECT now() - interval '1 day' + x * interval '1 ms' AS t FROM generate_series(1, ${done}) x) s`);
    await q(`INSERT INTO $S.mailroom_job (queue, type, status, payload, run_at, attempts, max_attempts, last_error, dead_reason, created_at, started_at, finished_at)
             SELECT 'default', 'bench', 'dead', '{"i":0}', t, 5, 5, 'Error: boom', 'exhausted', t, t, t + interval '1 ms'
             FROM (SELECT now() - interval '1 day' + x * interval '1 ms' AS t FROM generate_series(1, ${dead}) x) s`);
    await q(`VACUUM ANALYZE $S.mailroom_job`);
    await q(`VACUUM ANALYZE $S.mailroom_queue_count`);
  } finally {
    await c.end();
  }
}

async function seedPlainjob(path, done, dead) {
  const db = await sqlite(path);
  const t = Date.now() - 86_400_000;
  db.exec('BEGIN');
  db.prepare(
    `WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < ?)
     INSERT INTO plainjob_jobs (type, data, status, next_run_at, created_at) SELECT 'bench', '{"i":0}', 2, ? + x, ? + x FROM s`,
  ).run(done, t, t);
  db.prepare(
    `WITH RECURSIVE s(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM s WHERE x < ?)
     INSERT INTO plainjob_jobs (type, data, status, failed_at, error, next_run_at, created_at) SELECT 'bench', '{"i":0}', 3, ? + x, 'Error: boom', ? + x, ? + x FROM s`,
  ).run(dead, t, t, t);
  db.exec('COMMIT');
  db.exec('ANALYZE');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}
