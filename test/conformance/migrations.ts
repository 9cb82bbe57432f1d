// Migrations: running them again changes nothing, and a database migrated by a newer
// release is refused with both version numbers rather than misread.

import { describe, expect, it } from 'vitest';
import { SchemaTooNewError } from '../../src/core/errors.js';
import { loadMigrations } from '../../src/store/migrations.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { T0, enqueue, jobInsert, rawSql, rejectionOf, useStore } from './context.js';

const FUTURE_VERSION = 9_999;

export function migrationsConformance(harness: StoreHarness): void {
  describe('migrations', () => {
    const ctx = useStore(harness);

    it('reports the database at the newest version the code knows after migrating', async () => {
      const version = await ctx.store.schemaVersion();
      expect(version.code).toBeGreaterThanOrEqual(1);
      expect(version.database).toBe(version.code);
    });

    it('migrates a second time without applying anything or touching data', async () => {
      const { job } = await enqueue(ctx.store, { payload: { survives: true } });
      const again = await ctx.store.migrate();
      expect(again.applied).toEqual([]);
      expect(again.version).toBe((await ctx.store.schemaVersion()).code);
      expect((await ctx.store.jobGet({ id: job.id }))!.payload).toEqual({ survives: true });
    });

    it('refuses a schema newer than the code with SchemaTooNewError naming both versions', async () => {
      const { exec } = rawSql(harness, ctx.opened);
      const codeVersion = (await ctx.store.schemaVersion()).code;
      // Copying applied_at from the first row keeps this one statement valid in both
      // dialects whatever type each gives that column.
      await exec(
        `INSERT INTO mailroom_migration (version, name, applied_at) ` +
          `SELECT ${FUTURE_VERSION}, 'from_a_newer_release', applied_at FROM mailroom_migration WHERE version = 1`,
      );
      // Each call is made only when awaited: a second promise made up front could reject
      // before anything listens to it (an unhandled rejection fails the whole run).
      for (const attempt of [() => ctx.store.migrate(), () => ctx.store.schemaVersion()]) {
        const error = await rejectionOf(attempt());
        expect(error).toBeInstanceOf(SchemaTooNewError);
        expect(error.code).toBe('MR_ERR_SCHEMA_TOO_NEW');
        expect(error.databaseVersion).toBe(FUTURE_VERSION);
        expect(error.codeVersion).toBe(codeVersion);
        expect(error.message).toContain(String(FUTURE_VERSION));
        expect(error.message).toContain(String(codeVersion));
      }
    });

    it('runs against a newer schema whose migrations declare this code still compatible', async () => {
      const { exec } = rawSql(harness, ctx.opened);
      const { job } = await enqueue(ctx.store, { payload: { kept: true } });
      const codeVersion = (await ctx.store.schemaVersion()).code;
      // A later release's migration that declared `-- oldest-compatible-code: <this code>`.
      await exec(
        `INSERT INTO mailroom_migration (version, name, applied_at, oldest_compatible_code) ` +
          `SELECT ${FUTURE_VERSION}, 'tolerated_by_older_code', applied_at, ${codeVersion} FROM mailroom_migration WHERE version = 1`,
      );
      expect(await ctx.store.schemaVersion()).toEqual({ database: FUTURE_VERSION, code: codeVersion });
      expect(await ctx.store.migrate()).toEqual({ applied: [], version: FUTURE_VERSION });
      expect((await ctx.store.jobGet({ id: job.id }))!.payload).toEqual({ kept: true });
    });

    it('records in the ledger the compatibility each migration file declares, for older processes to read', async () => {
      const { query } = rawSql(harness, ctx.opened);
      // Both dialects declare the same values (test/sql-parity.test.ts); read either's files.
      const declared = loadMigrations(new URL('../../src/store/sqlite/migrations/', import.meta.url))
        .filter((m) => m.oldestCompatibleCode !== m.version)
        .map((m) => [m.version, m.oldestCompatibleCode]);
      expect(declared.length).toBeGreaterThan(0);
      const rows = await query('SELECT version, oldest_compatible_code FROM mailroom_migration WHERE oldest_compatible_code IS NOT NULL ORDER BY version');
      expect(rows.map((row) => [Number(row.version), Number(row.oldest_compatible_code)])).toEqual(declared);
    });

    it('refuses a newer schema when one of its migrations needs newer code than this, naming that version', async () => {
      const { exec } = rawSql(harness, ctx.opened);
      const codeVersion = (await ctx.store.schemaVersion()).code;
      await exec(
        `INSERT INTO mailroom_migration (version, name, applied_at, oldest_compatible_code) ` +
          `SELECT ${FUTURE_VERSION - 1}, 'tolerated_by_older_code', applied_at, ${codeVersion} FROM mailroom_migration WHERE version = 1`,
      );
      await exec(
        `INSERT INTO mailroom_migration (version, name, applied_at, oldest_compatible_code) ` +
          `SELECT ${FUTURE_VERSION}, 'needs_newer_code', applied_at, ${codeVersion + 1} FROM mailroom_migration WHERE version = 1`,
      );
      for (const attempt of [() => ctx.store.migrate(), () => ctx.store.schemaVersion()]) {
        const error = await rejectionOf(attempt());
        expect(error).toBeInstanceOf(SchemaTooNewError);
        expect(error).toMatchObject({ databaseVersion: FUTURE_VERSION, codeVersion, requiredCodeVersion: codeVersion + 1 });
        expect(error.message).toContain(String(codeVersion + 1));
      }
    });

    it('refuses every call once closed with MR_ERR_CLOSED, the same code on every store', async () => {
      const other = await ctx.opened.openAnother();
      await other.ping();
      await other.close();
      const calls: Array<() => Promise<unknown>> = [
        () => other.ping(),
        () => other.jobGet({ id: '1' }),
        () => other.jobInsertMany({ jobs: [jobInsert()], now: T0 }),
        () => other.jobClaim({ workerId: 'w', types: ['test_job'], queues: null, limit: 1, leaseMs: 1_000, now: T0 }),
        () => other.schemaVersion(),
      ];
      for (const call of calls) expect(await rejectionOf(call())).toMatchObject({ code: 'MR_ERR_CLOSED' });
    });

    it('answers the enqueues and publishes asked for before close, and stores them', async () => {
      // Each store groups concurrent acknowledgements into one commit at the end of the turn:
      // close() must commit what waits there, not refuse it.
      const other = await ctx.opened.openAnother();
      await other.endpointAdd({ tenant: 'acme', url: 'https://hooks.example.com/in', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', addedBy: 'operator' });
      const publish = (i: number) => ({ tenant: 'acme', type: 'invoice.paid', key: null, job: jobInsert({ type: 'deliver' }), payloadJson: JSON.stringify({ i }) });
      const published = [0, 1, 2, 3].map((i) => other.messagePublish(publish(i)));
      const enqueued = [0, 1, 2].map(() => other.jobInsertMany({ jobs: [jobInsert({ type: 'before_close' })] }));
      const closed = other.close();
      const settled = await Promise.allSettled([...published, ...enqueued]);
      await closed;
      expect(settled.map((result) => (result.status === 'rejected' ? String(result.reason) : result.status))).toEqual(Array(7).fill('fulfilled'));
      expect(await rejectionOf(other.jobInsertMany({ jobs: [jobInsert()] }))).toMatchObject({ code: 'MR_ERR_CLOSED' });
      expect((await ctx.store.messageList({ tenant: 'acme' })).length).toBe(4);
      expect((await ctx.store.jobList({ type: 'before_close' })).length).toBe(3);
    });

    it('answers ping while open and refuses it once closed, so readiness checks see a dead store', async () => {
      await expect(ctx.store.ping()).resolves.toBeUndefined();
      const other = await ctx.opened.openAnother();
      await other.ping();
      await other.close();
      await expect(other.ping()).rejects.toThrow();
      await expect(ctx.store.ping()).resolves.toBeUndefined();
    });
  });
}
