// SQLite-only faults, because they are faults of SQLite's single-file, single-writer
// design that PostgreSQL does not have in this form: another process holding the write
// lock past the lock deadline, and the database running out of pages. In both the
// ingress must answer 503 with Retry-After and store nothing partial, and once the fault
// is gone the retry stores exactly one event, with nothing acknowledged missing.

import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/validate-config.js';
import { StoreUnavailableError } from '../../src/core/errors.js';
import { createIngressServer } from '../../src/ingress/server.js';
import type { IngressServer } from '../../src/ingress/server.js';
import { Mailroom } from '../../src/mailroom.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { LOCK_HOLDER, SECRET, boundedAgent, cleanupFaults, postSigned, spawnTsx, tempDir } from './kit.js';

const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' });
const LOCK_DEADLINE_MS = 500;
const opened: Array<{ close(): Promise<void> | void }> = [];

async function openIngress(path: string): Promise<{ mr: Mailroom; store: SqliteStore; url: string; ingress: IngressServer }> {
  const store = new SqliteStore({ path, lockDeadlineMs: LOCK_DEADLINE_MS });
  const mr = await Mailroom.open({ store, logger: silent });
  const ingress = createIngressServer({
    mr,
    logger: silent,
    config: validateConfig({ sources: { s: { provider: 'standard', secrets: [SECRET], tasks: ['hook'] } } }),
  });
  const url = await ingress.listen(0, '127.0.0.1');
  opened.push({ close: () => ingress.close({ timeoutMs: 1_000 }) }, mr, store);
  return { mr, store, url, ingress };
}

function counts(path: string): { events: number; jobs: number } {
  const reader = new Database(path, { readonly: true });
  try {
    const events = (reader.prepare('SELECT count(*) AS n FROM mailroom_event').get() as { n: number }).n;
    const jobs = (reader.prepare('SELECT count(*) AS n FROM mailroom_job').get() as { n: number }).n;
    return { events, jobs };
  } finally {
    reader.close();
  }
}

describe('SQLite under faults', () => {
  afterEach(async () => {
    for (const item of opened.splice(0)) await item.close();
    cleanupFaults();
  });

  it('answers 503 with Retry-After while another process holds the write lock, stores nothing, then stores one row on retry', async () => {
    const path = join(tempDir(), 'mailroom.db');
    const { mr, url } = await openIngress(path);
    const agent = boundedAgent(4);
    const holder = spawnTsx(LOCK_HOLDER, [path], {});
    await holder.waitForLine((line) => line === 'locked');

    const t0 = Date.now();
    const refused = await postSigned(url, 'locked_1', agent);
    const waitedMs = Date.now() - t0;
    expect(refused.status).toBe(503);
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(waitedMs).toBeGreaterThanOrEqual(LOCK_DEADLINE_MS - 50);
    const enqueueError = await mr.enqueue('hook', {}).catch((error: unknown) => error);
    expect(enqueueError).toBeInstanceOf(StoreUnavailableError);
    expect(counts(path)).toEqual({ events: 0, jobs: 0 }); // nothing partial

    holder.child.stdin!.write('rollback\n');
    await holder.waitForLine((line) => line === 'released');
    expect((await postSigned(url, 'locked_1', agent)).status).toBe(202);
    expect((await postSigned(url, 'locked_1', agent)).status).toBe(200);
    expect(counts(path)).toEqual({ events: 1, jobs: 1 });
    agent.destroy();
    console.log(`[faults] sqlite lock held by another process: 503 after ${waitedMs} ms (deadline ${LOCK_DEADLINE_MS}), Retry-After ${refused.retryAfter}, partial rows 0, retry stored 1`);
  });

  it('answers 503 when the database is full, keeps every acknowledged event and job, and passes integrity_check once room is made', async () => {
    const path = join(tempDir(), 'mailroom.db');
    const { mr, store, url } = await openIngress(path);
    const agent = boundedAgent(20);
    const ackedJobs: string[] = [];
    for (let i = 0; i < 20; i++) ackedJobs.push((await mr.enqueue('work', { i, pad: 'x'.repeat(500) })).id);
    const db = store.database;
    const pageCount = Number(db.pragma('page_count', { simple: true }));
    db.pragma(`max_page_count = ${pageCount + 8}`);

    // Concurrent rounds so several acknowledgements share a group commit when it fails.
    const acked = new Set<string>();
    const refusedIds: string[] = [];
    let sawFullEnqueue = false;
    for (let round = 0; round < 40 && refusedIds.length < 40; round++) {
      const ids = Array.from({ length: 20 }, (_, i) => `full_${round}_${i}`);
      const results = await Promise.all(ids.map((id) => postSigned(url, id, agent)));
      for (const result of results) {
        if (result.status === 202) acked.add(result.deliveryId);
        else {
          expect(result.status).toBe(503);
          expect(Number(result.retryAfter)).toBeGreaterThanOrEqual(1);
          refusedIds.push(result.deliveryId);
        }
      }
      const enqueued = await mr.enqueue('work', { round, pad: 'y'.repeat(2_000) }).then(
        (job) => job.id,
        (error: unknown) => {
          expect(error).toBeInstanceOf(StoreUnavailableError);
          sawFullEnqueue = true;
          return null;
        },
      );
      if (enqueued) ackedJobs.push(enqueued);
    }
    expect(refusedIds.length).toBeGreaterThan(0);
    expect(sawFullEnqueue).toBe(true);

    db.pragma('max_page_count = 1073741823');
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    const reader = new Database(path, { readonly: true });
    const stored = new Set((reader.prepare('SELECT delivery_id AS d FROM mailroom_event').all() as Array<{ d: string }>).map((r) => r.d));
    const storedJobs = new Set((reader.prepare('SELECT id FROM mailroom_job').all() as Array<{ id: number }>).map((r) => String(r.id)));
    reader.close();
    expect([...acked].filter((id) => !stored.has(id))).toEqual([]);
    expect(ackedJobs.filter((id) => !storedJobs.has(id))).toEqual([]);
    const storedUnacked = refusedIds.filter((id) => stored.has(id)).length;

    // With room again the sender's retries store each refused delivery once.
    const retried = await Promise.all(refusedIds.map((id) => postSigned(url, id, agent)));
    expect(retried.filter((r) => r.status === 202).length + retried.filter((r) => r.status === 200).length).toBe(refusedIds.length);
    const after = counts(path);
    expect(after.events).toBe(acked.size + refusedIds.length);
    expect(after.jobs).toBe(after.events + ackedJobs.length);
    agent.destroy();
    console.log(
      `[faults] sqlite database full: acked=${acked.size} refused503=${refusedIds.length} storedButRefused=${storedUnacked} ` +
        `enqueueRefused=yes ackedMissing=0 integrity=ok retriesStored=${refusedIds.length}`,
    );
  });
});
