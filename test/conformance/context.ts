// Shared plumbing for the conformance areas: a fresh store per test, a pinned clock, and
// small builders so each test reads as the behaviour it checks.

import { afterEach, beforeEach } from 'vitest';
import type { ClaimedJob, JobStatus, StatusCounts } from '../../src/core/types.js';
import type { JobClaimParams, JobInsert, JobInsertResult, Store, StoreExecutor } from '../../src/store/store.js';
import { jobInsert } from '../harness/factory.js';
import type { HarnessStore, StoreHarness } from '../harness/store-harness.js';

/**
 * The suite's "now". Every call passes `now` explicitly; a store that ignores it shows up
 * because T0 is years away from the machine's clock.
 */
export const T0 = new Date('2030-01-01T00:00:00.000Z');

/** T0 plus `ms`. */
export function at(ms: number): Date {
  return new Date(T0.getTime() + ms);
}

export const SECOND_MS = 1_000;
export const MINUTE_MS = 60_000;
export const DAY_MS = 24 * 3_600_000;

export interface StoreContext {
  /** The fresh, migrated store of the current test. */
  readonly store: Store;
  /** The harness's handle: url, openAnother(), exec/query. */
  readonly opened: HarnessStore;
}

/**
 * Opens a fresh store before each test and runs the harness cleanup after it.
 * Call inside a `describe`; read the returned object's fields inside tests only.
 */
export function useStore(harness: StoreHarness): StoreContext {
  let opened: HarnessStore | undefined;
  beforeEach(async () => {
    opened = await harness.open();
  });
  afterEach(async () => {
    opened = undefined;
    await harness.cleanup();
  });
  return {
    get store() {
      if (!opened) throw new Error('the store is only open inside a test');
      return opened.store;
    },
    get opened() {
      if (!opened) throw new Error('the store is only open inside a test');
      return opened;
    },
  };
}

/** Inserts one job at `now` (default T0). */
export async function enqueue(
  store: StoreExecutor,
  overrides: Parameters<typeof jobInsert>[0] = {},
  now: Date = T0,
): Promise<JobInsertResult> {
  const [result] = await store.jobInsertMany({ jobs: [jobInsert(overrides)], now });
  return result!;
}

/** Inserts several jobs of type `test_job` at `now`; returns their ids in order. */
export async function enqueueIds(store: StoreExecutor, jobs: Parameters<typeof jobInsert>[0][], now: Date = T0): Promise<string[]> {
  const results = await store.jobInsertMany({ jobs: jobs.map((job) => jobInsert(job)), now });
  return results.map((result) => result.job.id);
}

export { jobInsert };
export type { JobInsert };

/** Claims with test defaults: type `test_job`, every queue, limit 10, 30 s lease, at T0. */
export function claim(store: StoreExecutor, params: Partial<JobClaimParams> = {}): Promise<ClaimedJob[]> {
  return store.jobClaim({
    workerId: 'worker-a',
    types: ['test_job'],
    queues: null,
    limit: 10,
    leaseMs: 30 * SECOND_MS,
    now: T0,
    ...params,
  });
}

/** Claims exactly one job and fails the test if none came. */
export async function claimOne(store: StoreExecutor, params: Partial<JobClaimParams> = {}): Promise<ClaimedJob> {
  const [job, ...rest] = await claim(store, { limit: 1, ...params });
  if (!job || rest.length > 0) throw new Error(`expected to claim exactly one job, got ${rest.length + (job ? 1 : 0)}`);
  return job;
}

/** The ids of jobs, for order-sensitive comparisons. */
export function idsOf(jobs: readonly { readonly id: string }[]): string[] {
  return jobs.map((job) => job.id);
}

/** A job's status, or 'missing'. */
export async function statusOf(store: StoreExecutor, id: string): Promise<JobStatus | 'missing'> {
  return (await store.jobGet({ id }))?.status ?? 'missing';
}

/** byQueue[queue] with absent statuses (or an absent queue) read as 0. */
export async function queueCounts(store: StoreExecutor, queue: string, now: Date = T0): Promise<StatusCounts> {
  const counts = (await store.jobStats({ now })).byQueue[queue];
  return {
    pending: counts?.pending ?? 0,
    running: counts?.running ?? 0,
    done: counts?.done ?? 0,
    dead: counts?.dead ?? 0,
  };
}

/** Ground truth for stats: counts per queue and status from listing every job. */
export async function countedFromList(store: StoreExecutor): Promise<Record<string, StatusCounts>> {
  const result: Record<string, StatusCounts> = {};
  for (const job of await store.jobList({ limit: 10_000 })) {
    const counts = (result[job.queue] ??= { pending: 0, running: 0, done: 0, dead: 0 });
    counts[job.status] += 1;
  }
  return result;
}

/** byQueue with all-zero queues dropped, so "absent" and "all zero" compare equal. */
export async function nonZeroByQueue(store: StoreExecutor, now: Date = T0): Promise<Record<string, StatusCounts>> {
  const result: Record<string, StatusCounts> = {};
  for (const [queue, counts] of Object.entries((await store.jobStats({ now })).byQueue)) {
    const full = { pending: counts.pending ?? 0, running: counts.running ?? 0, done: counts.done ?? 0, dead: counts.dead ?? 0 };
    if (full.pending + full.running + full.done + full.dead > 0) result[queue] = full;
  }
  return result;
}

/** SQL literals for raw statements in a test: a time and a boolean as the harness's store keeps them. */
export function sqlLiterals(harness: StoreHarness): { time(date: Date): string; bool(value: boolean): string } {
  const isSqlite = harness.name === 'sqlite';
  return {
    time: (date) => (isSqlite ? String(date.getTime()) : `'${date.toISOString()}'`),
    bool: (value) => (isSqlite ? (value ? '1' : '0') : String(value)),
  };
}

/** The harness's raw-SQL helpers, or a failure naming what the harness must add. */
export function rawSql(harness: StoreHarness, opened: HarnessStore): Required<Pick<HarnessStore, 'exec' | 'query'>> {
  const { exec, query } = opened;
  if (!exec || !query) {
    throw new Error(`The ${harness.name} harness must implement HarnessStore.exec and .query (test/harness/store-harness.ts) for this test.`);
  }
  return { exec: exec.bind(opened), query: query.bind(opened) };
}

/** Awaits `promise` and returns what it rejected with; fails if it resolved. */
export async function rejectionOf(promise: Promise<unknown>): Promise<any> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to reject, but it resolved');
}
