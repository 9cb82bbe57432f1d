// Upgrades with data in the database: a schema at migration 0001 holding jobs in every
// status, attempts of every outcome, an event with its jobs and a replay, then every
// later migration applied one at a time to the schema before it. Nothing may be lost on
// the way, and at the end the Store reads it all back and carries on working with it.
// The rows are written with raw SQL in 0001's shape (the Store's statements need the
// newest schema), one fixture file per dialect with the same rows and the same ids.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { StoreHarness } from '../harness/store-harness.js';
import { T0, at, rawSql, SECOND_MS } from './context.js';
import { asDone } from '../harness/finishes.js';
import { loadMigrations } from '../../src/store/migrations.js';

const FIXTURES = new URL('../fixtures/upgrade/', import.meta.url);
const TABLES = ['mailroom_job', 'mailroom_attempt', 'mailroom_event', 'mailroom_replay'] as const;

export function upgradeConformance(harness: StoreHarness): void {
  describe('upgrade with data', () => {
    it('applies every migration to the schema before it with data in it, and the Store reads the data back', async () => {
      const opened = await harness.openUnmigrated();
      try {
        const { store } = opened;
        const { exec, query } = rawSql(harness, opened);
        const codeVersion = (await store.schemaVersion()).code;
        expect(await store.migrate({ toVersion: 1 })).toEqual({ applied: [1], version: 1 });
        await exec(readFileSync(new URL(`${harness.name}.sql`, FIXTURES), 'utf8'));
        const counts = async () => {
          const out: Record<string, number> = {};
          for (const table of TABLES) out[table] = Number((await query(`SELECT count(*) AS n FROM ${table}`))[0]!.n);
          return out;
        };
        const before = await counts();
        expect(before).toEqual({ mailroom_job: 6, mailroom_attempt: 5, mailroom_event: 1, mailroom_replay: 1 });
        // Every version the dialect has, in order (a number reserved by another branch may be absent).
        const versions = loadMigrations(new URL(`../../src/store/${harness.name}/migrations/`, import.meta.url)).map((m) => m.version);
        expect(versions.at(-1)).toBe(codeVersion);
        for (const version of versions.slice(1)) {
          expect(await store.migrate({ toVersion: version }), `migration ${version}`).toEqual({ applied: [version], version });
          expect(await counts(), `rows after migration ${version}`).toEqual(before);
        }

        // Read back through the Store.
        const stats = await store.jobStats({ now: T0 });
        expect(stats.byQueue.upgrade).toEqual({ pending: 2, running: 1, done: 1, dead: 2 });
        const pending = (await store.jobGet({ id: '1' }))!;
        expect(pending).toMatchObject({ status: 'pending', type: 'mail', payload: { n: 1 }, key: 'key-1', attempts: 0, traceContext: null });
        expect(pending.runAt).toEqual(T0);
        const running = (await store.jobGet({ id: '2' }))!;
        expect(running).toMatchObject({ status: 'running', priority: 5, attempts: 1, leaseOwner: 'w-1' });
        expect(running.leaseExpiresAt).toEqual(at(60 * SECOND_MS));
        const done = (await store.jobGet({ id: '3' }))!;
        expect(done.attemptsLog.map((a) => [a.attempt, a.outcome, a.stack])).toEqual([
          [1, 'failed', null],
          [2, 'done', null],
        ]);
        const dead = (await store.jobGet({ id: '4' }))!;
        expect(dead).toMatchObject({ status: 'dead', deadReason: 'exhausted', lastError: 'boom', attempts: 3 });
        expect(dead.attemptsLog.map((a) => a.outcome)).toEqual(['failed', 'timeout', 'lost']);
        expect(dead.replays).toEqual([{ at: new Date(1_893_455_450_000), reason: 'after the fix', by: 'ops', attemptsBefore: null }]);
        expect((await store.jobGet({ id: '5' }))!).toMatchObject({ status: 'dead', deadReason: 'cancelled' });
        const grouped = (await store.jobGet({ id: '6' }))!;
        expect(grouped).toMatchObject({ status: 'pending', group: 'g-1', eventId: '1', source: 'stripe' });
        expect(grouped.attemptsLog.map((a) => a.outcome)).toEqual(['handed_back']);
        const event = (await store.eventGet({ id: '1' }))!;
        expect(event).toMatchObject({ source: 'stripe', deliveryId: 'evt_1', headers: { 'content-type': 'application/json' } });
        expect(event.rawBody.toString()).toBe('{"ok":true}');
        expect((await store.jobList({ limit: 10 })).map((job) => job.id)).toEqual(['1', '2', '3', '4', '5', '6']);

        // And carries on: the upgraded rows are claimed, finished and replayed like new ones.
        const claimed = await store.jobClaim({ workerId: 'w-new', types: ['mail', 'charge'], queues: null, limit: 10, leaseMs: 30_000, now: T0 });
        expect(claimed.map((job) => job.id).sort()).toEqual(['1', '6']);
        expect(await store.jobFinishMany({ finishes: asDone(claimed.map((job) => ({ id: job.id, leaseToken: job.leaseToken }))), now: at(1) })).toHaveLength(2);
        expect(await store.jobReplay({ ids: ['4'], reason: 'again', by: 'test', now: at(2) })).toEqual(['4']);
        expect((await store.jobStats({ now: at(3) })).byQueue.upgrade).toEqual({ pending: 1, running: 1, done: 3, dead: 1 });
      } finally {
        await harness.cleanup();
      }
    });
  });
}
