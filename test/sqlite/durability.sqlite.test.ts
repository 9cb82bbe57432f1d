// SQLite-only checks, and why they cannot live in the shared conformance suite:
// - WAL and `synchronous` are SQLite pragmas with no PostgreSQL counterpart; SPEC §2 asks
//   for a test of the durability setting actually in force, because a kill -9 test cannot
//   see a missing fsync.
// - Lock contention here means another connection holding SQLite's single write lock
//   (BEGIN IMMEDIATE) past the store's lock deadline; PostgreSQL has row locks instead and
//   no whole-database writer lock to hold.

import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { StoreUnavailableError } from '../../src/core/errors.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { SqliteStoreOptions } from '../../src/store/sqlite/sqlite-store.js';
import { jobInsert } from '../harness/factory.js';

/** PRAGMA synchronous values as SQLite reports them. */
const SYNCHRONOUS_FULL = 2;
const SYNCHRONOUS_NORMAL = 1;

const opened: Array<{ close(): unknown }> = [];
const dirs: string[] = [];

afterEach(async () => {
  for (const handle of opened.splice(0).reverse()) await handle.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-sqlite-'));
  dirs.push(dir);
  return join(dir, 'mailroom.db');
}

async function openStore(options: Omit<SqliteStoreOptions, 'path'> & { path?: string } = {}): Promise<SqliteStore> {
  const store = new SqliteStore({ path: tempPath(), ...options });
  opened.push(store);
  await store.migrate();
  return store;
}

function synchronousInForce(store: SqliteStore): unknown {
  return store.database.pragma('synchronous', { simple: true });
}

function enqueueOne(store: SqliteStore, type = 'test_job') {
  return store.jobInsertMany({ jobs: [jobInsert({ type })] });
}

describe('SQLite durability settings', () => {
  it('runs in WAL journal mode', async () => {
    const store = await openStore();
    expect(store.database.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.durability.journal).toBe('wal');
  });

  it("commits an acknowledgement with synchronous=FULL in 'full' mode, even right after bookkeeping", async () => {
    const store = await openStore({ synchronous: 'full' });
    await enqueueOne(store);
    // A claim is worker bookkeeping and may drop to NORMAL; the next enqueue must restore FULL.
    await store.jobClaim({ workerId: 'w', types: ['test_job'], queues: null, limit: 1, leaseMs: 30_000 });
    expect(synchronousInForce(store)).toBe(SYNCHRONOUS_NORMAL);
    await enqueueOne(store);
    expect(synchronousInForce(store)).toBe(SYNCHRONOUS_FULL);
  });

  it("commits cancel, replay and ingress acknowledgements with synchronous=FULL in 'full' mode", async () => {
    const store = await openStore({ synchronous: 'full' });
    const [inserted] = await enqueueOne(store);
    const id = inserted!.job.id;
    const acknowledgements = [
      () => store.jobCancel({ id }),
      () => store.jobReplay({ ids: [id], reason: null, by: null }),
      () =>
        store.eventInsertWithJobs({
          event: { source: 's', deliveryId: 'd', type: null, headers: {}, rawBody: Buffer.from('{}') },
          jobs: [],
        }),
    ];
    for (const acknowledge of acknowledgements) {
      await store.jobRescue({}); // bookkeeping first, so each acknowledgement must switch back
      expect(synchronousInForce(store)).toBe(SYNCHRONOUS_NORMAL);
      await acknowledge();
      expect(synchronousInForce(store)).toBe(SYNCHRONOUS_FULL);
    }
    expect((await store.jobGet({ id }))!.replays).toHaveLength(1);
  });

  it("commits everything with synchronous=NORMAL in 'normal' mode and says so", async () => {
    const store = await openStore({ synchronous: 'normal' });
    await enqueueOne(store);
    expect(synchronousInForce(store)).toBe(SYNCHRONOUS_NORMAL);
    expect(store.durability).toMatchObject({ synchronous: 'normal', acknowledgements: 'NORMAL' });
    expect(store.description).toContain('normal');
  });

  it("describes 'full' as the default durability", async () => {
    const store = await openStore();
    expect(store.durability).toMatchObject({ synchronous: 'full', acknowledgements: 'FULL', bookkeeping: 'NORMAL' });
  });
});

describe('SQLite write lock held by another connection', () => {
  it('fails a write with StoreUnavailableError past the lock deadline, writes nothing, and succeeds once released', async () => {
    const path = tempPath();
    const store = await openStore({ path, lockDeadlineMs: 50, busyTimeoutMs: 20 });
    const other = new Database(path);
    opened.push(other);
    other.exec('BEGIN IMMEDIATE');

    const error = await enqueueOne(store, 'blocked').then(
      () => null,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreUnavailableError).code).toBe('MR_ERR_STORE_UNAVAILABLE');
    expect((error as StoreUnavailableError).retryAfterMs).toBeGreaterThan(0);

    other.exec('ROLLBACK');
    expect(await store.jobList({ type: 'blocked' })).toEqual([]);
    const [inserted] = await enqueueOne(store, 'blocked');
    expect((await store.jobList({ type: 'blocked' })).map((job) => job.id)).toEqual([inserted!.job.id]);
  });

  it('waits out a lock released before the deadline instead of failing', async () => {
    const path = tempPath();
    const store = await openStore({ path, lockDeadlineMs: 5_000, busyTimeoutMs: 10 });
    const other = new Database(path);
    opened.push(other);
    other.exec('BEGIN IMMEDIATE');
    const pending = enqueueOne(store, 'waited');
    // The store retries asynchronously, so this callback runs while the write is waiting.
    setImmediate(() => other.exec('COMMIT'));
    const [inserted] = await pending;
    expect(inserted!.job.type).toBe('waited');
  });

  it('fails transactionSync with StoreUnavailableError, not a raw driver error, while the lock is held', async () => {
    const path = tempPath();
    const store = await openStore({ path, lockDeadlineMs: 50, busyTimeoutMs: 20 });
    const other = new Database(path);
    opened.push(other);
    other.exec('BEGIN IMMEDIATE');
    let thrown: unknown;
    try {
      store.transactionSync((tx) => tx.jobInsertMany({ jobs: [jobInsert({ type: 'outbox' })] }));
    } catch (error) {
      thrown = error;
    }
    other.exec('ROLLBACK');
    expect(thrown).toBeInstanceOf(StoreUnavailableError);
    expect(await store.jobList({ type: 'outbox' })).toEqual([]);
  });
});

// WAL checkpoints run between callers (src/store/sqlite/wal-checkpointer.ts): SQLite's own
// checkpoint, inside whichever commit crosses its threshold, was the p99 of enqueue ->
// handler start at synchronous=NORMAL.
describe('SQLite WAL checkpoints', () => {
  const WAL_PAGE_BYTES = 4096;

  /** Counts the checkpoints the store runs on its handle (its pragma calls, watched), and the WAL frames each found. */
  function countCheckpoints(store: SqliteStore): { count: number; frames: number[]; restarts: number } {
    const counter = { count: 0, frames: [] as number[], restarts: 0 };
    const pragma = store.database.pragma.bind(store.database);
    store.database.pragma = ((source: string, options?: Database.PragmaOptions) => {
      const answer = pragma(source, options);
      if (source === 'wal_checkpoint(RESTART)') counter.restarts++;
      else if (source.startsWith('wal_checkpoint')) {
        counter.count++;
        counter.frames.push((answer as Array<{ log: number }>)[0]!.log);
      }
      return answer;
    }) as typeof store.database.pragma;
    return counter;
  }

  it('checkpoints its own commits on a later turn, keeping the WAL far below the backstop threshold', async () => {
    const store = await openStore({ synchronous: 'normal' });
    const backstopPages = store.database.pragma('wal_autocheckpoint', { simple: true }) as number;
    expect(backstopPages).toBeGreaterThan(1000);
    const checkpoints = countCheckpoints(store);
    // One enqueue per turn of the event loop, as separate HTTP requests would arrive.
    for (let i = 0; i < 1000; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      const before = checkpoints.count;
      await enqueueOne(store);
      // Never inside the caller's own write: its answer comes first.
      expect(checkpoints.count).toBe(before);
    }
    expect(checkpoints.count).toBeGreaterThanOrEqual(5);
    // Small commits stretch the interval toward its top, doubling each time: not a
    // checkpoint every 8.
    expect(checkpoints.count).toBeLessThanOrEqual(10);
    const walBytes = statSync(`${store.database.name}-wal`).size;
    // About five pages a commit: without the store's checkpoints the WAL holds all 1,000
    // commits' (~5,000 pages); with them the longest stretch is ~250 commits'.
    expect(walBytes).toBeLessThan(3_000 * WAL_PAGE_BYTES);
    expect((await store.jobList({ type: 'test_job', limit: 2000 })).length).toBe(1000);
  });

  it('checkpoints large commits more often, so that no checkpoint copies much more than another', async () => {
    const store = await openStore({ synchronous: 'normal' });
    const checkpoints = countCheckpoints(store);
    // Commits of 200 jobs with 1 KB payloads, about 60 WAL pages each (a worker's claims and
    // outcomes of hundreds of jobs are that size). Every 1,024 commits would be ~60,000 pages.
    const payload = { text: 'x'.repeat(1_000) };
    for (let i = 0; i < 400; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      await store.jobInsertMany({ jobs: Array.from({ length: 200 }, () => jobInsert({ payload })) });
    }
    expect(checkpoints.count).toBeGreaterThanOrEqual(6);
    // The first interval is short and the rest are sized by what the last checkpoint found:
    // each copies about 4,096 pages (16 MB). An interval that only doubled would reach 128
    // commits (7,700 pages) within these 400, and 256 (15,400) soon after.
    expect(Math.max(...checkpoints.frames)).toBeLessThan(6_000);
    expect(statSync(`${store.database.name}-wal`).size).toBeLessThan(6_000 * WAL_PAGE_BYTES);
    expect(await store.jobList({ type: 'test_job', limit: 1 })).toHaveLength(1);
  });

  it('counts only the frames written since the last checkpoint while a reader keeps SQLite from starting the WAL over, and tries a RESTART once per 8,192 frames', async () => {
    const store = await openStore({ synchronous: 'normal' });
    const checkpoints = countCheckpoints(store);
    // Another connection (a second process reading the file) takes a snapshot after each
    // commit and holds it over the next turn (when a checkpoint runs) and the next write:
    // each checkpoint copies every frame, yet the write after it may not start the WAL
    // over while that snapshot still reads from it, so the WAL only grows.
    const reader = new Database(store.database.name, { readonly: true });
    opened.push(reader);
    const read = reader.prepare('SELECT count(*) FROM mailroom_job');
    for (let i = 0; i < 3000; i++) {
      reader.exec('BEGIN');
      read.get();
      await new Promise((resolve) => setImmediate(resolve));
      await enqueueOne(store);
      reader.exec('COMMIT');
    }
    // Taking the whole WAL for new frames each time would cut the interval to its floor
    // (4 commits: hundreds of checkpoints once the WAL passes 4,096 pages); the frames it
    // grew by keep it as without a reader.
    expect(Math.max(...checkpoints.frames)).toBeGreaterThan(6_000);
    expect(checkpoints.count).toBeLessThanOrEqual(12);
    // Past 8,192 frames copied whole, a RESTART; this reader cannot end its snapshot while
    // the thread waits, so it comes back busy, and the next waits for another 8,192 frames
    // (every checkpoint from there on would try it again, and stall up to its wait).
    const largest = Math.max(...checkpoints.frames);
    expect(checkpoints.frames.filter((frames) => frames >= 8_192).length).toBeGreaterThanOrEqual(2);
    expect(checkpoints.restarts).toBeGreaterThanOrEqual(1);
    expect(checkpoints.restarts).toBeLessThanOrEqual(Math.floor(largest / 8_192));
    expect(store.database.pragma('busy_timeout', { simple: true })).toBe(200);
  });

  it('checkpoints inside a commit when a caller that never lets the event loop turn has starved the scheduled one', async () => {
    const store = await openStore({ synchronous: 'normal' });
    const checkpoints = countCheckpoints(store);
    // A chain of awaited enqueues: microtasks only, so a checkpoint left for the next turn
    // of the event loop cannot run until the chain ends. Counted before anything yields.
    for (let i = 0; i < 5_000; i++) await enqueueOne(store);
    expect(checkpoints.count).toBeGreaterThanOrEqual(2);
  });

  it('bounds a starved caller to about two intervals once the intervals have grown long', async () => {
    const store = await openStore({ synchronous: 'normal' });
    const checkpoints = countCheckpoints(store);
    // One-job commits, one per turn, stretch the interval toward its top (~800 commits).
    for (let i = 0; i < 3_000; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      await enqueueOne(store);
    }
    const before = checkpoints.count;
    // Then a chain that never lets the event loop turn: four such intervals would be past
    // SQLite's backstop; the store checkpoints after one more interval and 50 ms.
    for (let i = 0; i < 3_000; i++) await enqueueOne(store);
    expect(checkpoints.count).toBeGreaterThan(before);
    // It found the chain's frames: SQLite's backstop had not started the WAL over first.
    expect(checkpoints.frames.at(-1)!).toBeGreaterThan(1_000);
  });

  it("leaves SQLite's default checkpointing alone on a handle the application shares", async () => {
    const database = new Database(tempPath());
    opened.push(database);
    const store = new SqliteStore({ database });
    opened.push(store);
    await store.migrate();
    expect(database.pragma('wal_autocheckpoint', { simple: true })).toBe(1000);
  });
});
