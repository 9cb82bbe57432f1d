// WAL checkpoints between callers instead of inside one.
//
// SQLite's automatic checkpoint runs inside the commit that crosses `wal_autocheckpoint`
// pages (1,000 by default), so at 200 jobs/s one enqueue or claim in about 70 waited for
// the checkpoint's copy and fsyncs (4-5 ms here) on top of its own commit. That was the
// p99 of enqueue -> handler start at synchronous=NORMAL: 4.0-4.6 ms over three 10 s runs,
// 1.6-2.1 ms with this module. So the store counts its own commits and, every
// COMMITS_PER_CHECKPOINT, runs a PASSIVE checkpoint on the next turn of the event loop,
// after the committing caller has its answer. SQLite's own checkpoint stays on at a
// higher threshold as a backstop for large transactions (batches of thousands of jobs),
// where a few ms inside the commit do not matter. A caller that commits in a chain of
// microtasks without ever letting the event loop turn gets the checkpoint inside its
// commit once the scheduled one has waited four windows.
//
// Only for a database the store opened itself: on a handle the application shares
// (the outbox), its own commits are not counted here and must keep SQLite's default.

import type Database from 'better-sqlite3';

/** About 5 WAL pages per one-job commit: a checkpoint every ~650 pages, a little more often than SQLite's default. */
const COMMITS_PER_CHECKPOINT = 128;
/** SQLite's own checkpoint, for what the commit count misses (big transactions). */
const BACKSTOP_AUTOCHECKPOINT_PAGES = 4_000;
/**
 * Commits after which a checkpoint still waiting for its turn runs inside the commit: a
 * caller that enqueues in a chain of microtasks never lets the event loop turn, and under
 * synchronous=NORMAL everything since the last checkpoint is lost to a power cut (the
 * power-loss test's first enqueuer lost every enqueue since it started, up to the
 * 4,000-page backstop). This bounds that window to a few hundred commits.
 */
const STARVED_COMMITS = 4 * COMMITS_PER_CHECKPOINT;

export class WalCheckpointer {
  private commits = 0;
  private isScheduled = false;
  private isStopped = false;

  constructor(private readonly db: Database.Database) {
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
  }

  /** Called after each commit of the store's own write transactions. */
  afterCommit(): void {
    if (this.isStopped) return;
    if (++this.commits >= STARVED_COMMITS) {
      // The scheduled one never got its turn: the event loop is starved. Now, in this caller.
      this.checkpoint();
      return;
    }
    if (this.commits < COMMITS_PER_CHECKPOINT || this.isScheduled) return;
    this.isScheduled = true;
    setImmediate(() => this.checkpoint());
  }

  /** No checkpoints after this (the store is closing its handle). */
  stop(): void {
    this.isStopped = true;
  }

  private checkpoint(): void {
    this.isScheduled = false;
    this.commits = 0;
    if (this.isStopped || !this.db.open) return;
    try {
      // PASSIVE never waits for readers or writers of other connections; what it cannot
      // copy now the next one will.
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // A checkpoint is an optimisation; SQLite's own (the backstop) still runs.
    }
  }
}
