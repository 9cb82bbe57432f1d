// Opens a Mailroom on a harness store (fresh and isolated per test) with a silent logger,
// and closes everything a test opened, so no worker or pool outlives its test.

import pino from 'pino';
import { Mailroom } from '../../src/mailroom.js';
import type { StoreHarness } from './store-harness.js';
import type { Store } from '../../src/store/store.js';

const open: Mailroom[] = [];

export interface TestMailroom {
  readonly mr: Mailroom;
  /** A URL that reaches the same data (for child processes). */
  readonly url: string;
  /** The store under `mr`, for a test that sets up state the API does not reach. */
  readonly store: Store;
}

export async function openTestMailroom(harness: StoreHarness): Promise<TestMailroom> {
  const { store, url } = await harness.open();
  const mr = await Mailroom.open({ store, logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
  open.push(mr);
  return { mr, url, store };
}

/** Close every Mailroom opened by this test (workers stopped), then the harness stores. */
export async function closeTestMailrooms(harness: StoreHarness): Promise<void> {
  for (const mr of open.splice(0)) await mr.close({ timeoutMs: 2_000 });
  await harness.cleanup();
}
