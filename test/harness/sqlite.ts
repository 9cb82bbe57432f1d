// SQLite harness: a real temp file per store, removed in cleanup.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import type { HarnessStore, StoreHarness } from './store-harness.js';

const dirs: string[] = [];
const stores: Store[] = [];

export const sqliteHarness: StoreHarness = {
  name: 'sqlite',
  capabilities: new SqliteStore({ path: ':memory:' }).capabilities,
  isAvailable: true,
  async open(): Promise<HarnessStore> {
    const opened = await sqliteHarness.openUnmigrated();
    await opened.store.migrate();
    return opened;
  },
  async openUnmigrated(): Promise<HarnessStore> {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-test-'));
    dirs.push(dir);
    const path = join(dir, 'mailroom.db');
    const store = new SqliteStore({ path });
    stores.push(store);
    return {
      store,
      url: `sqlite:${path}`,
      async openAnother() {
        const other = new SqliteStore({ path });
        stores.push(other);
        return other;
      },
      async exec(sql: string) {
        store.database.exec(sql);
      },
      async query(sql: string) {
        return store.database.prepare(sql).all() as Record<string, unknown>[];
      },
    };
  },
  async cleanup() {
    for (const store of stores.splice(0)) await store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  },
};
