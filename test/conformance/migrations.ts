// Migrations: running them again changes nothing, and a database migrated by a newer
// release is refused with both version numbers rather than misread.

import { describe, expect, it } from 'vitest';
import { SchemaTooNewError } from '../../src/core/errors.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { enqueue, rawSql, rejectionOf, useStore } from './context.js';

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
