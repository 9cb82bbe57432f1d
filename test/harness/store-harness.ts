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
  /** Drop everything open() created that is still around. */
  cleanup(): Promise<void>;
}

export interface HarnessStore {
  readonly store: Store;
  /** A store URL another connection or process can use to reach the same data. */
  readonly url: string;
  /** Open a second store on the same data (another "process"). Closed by cleanup. */
  openAnother(): Promise<Store>;
}
