// What a conformance or above-the-store suite needs from a store: open a fresh, migrated,
// isolated store (and a second connection to the same data), and clean up.

import type { Store, StoreCapabilities } from '../../src/store/store.js';

export interface StoreHarness {
  readonly name: 'sqlite' | 'postgres';
  readonly capabilities: StoreCapabilities;
  /** False when the store's server is unreachable outside CI: the suite skips loudly. */
  readonly isAvailable: boolean;
  /** A fresh, migrated, isolated store, plus the URL that reaches the same data. */
  open(): Promise<HarnessStore>;
  /** Like open(), but with no tables yet: migration tests build each earlier schema from it. */
  openUnmigrated(): Promise<HarnessStore>;
  /** Drop everything open() created that is still around. */
  cleanup(): Promise<void>;
}

export interface HarnessStore {
  readonly store: Store;
  /** A store URL another connection or process can use to reach the same data. */
  readonly url: string;
  /** Open a second store on the same data (another "process"). Closed by cleanup. */
  openAnother(): Promise<Store>;
  /**
   * Run raw SQL against this store's data (its temp file / its per-test schema), for the
   * few conformance cases that must create a state no Store method can, such as a
   * migration ledger row from a newer release (test/conformance/migrations.ts).
   * Optional so a harness can land before it; a test that needs it fails with a message
   * naming the harness. PostgreSQL harness: run it on a connection whose search_path is
   * the test's schema, so the unqualified `mailroom_*` table names resolve.
   */
  exec?(sql: string): Promise<void>;
  /**
   * Run one raw SELECT and return its rows, for the few conformance checks of state no
   * Store method exposes (attempt rows left behind by a purge). Same scope as `exec`.
   * Cast numbers with Number(): PostgreSQL returns count(*) as a string.
   */
  query?(sql: string): Promise<Record<string, unknown>[]>;
}
