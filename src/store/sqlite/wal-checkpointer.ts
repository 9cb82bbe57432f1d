// WAL checkpoints between callers instead of inside one, each of about the same size.
//
// SQLite's automatic checkpoint runs inside the commit that crosses `wal_autocheckpoint`
// pages (1,000 by default), so at 200 jobs/s one enqueue or claim in about 70 waited for
// the checkpoint's copy and fsyncs (4-5 ms here) on top of its own commit. That was the
// p99 of enqueue -> handler start at synchronous=NORMAL: 4.0-4.6 ms over three 10 s runs,
// 1.6-2.1 ms with this module. So the store counts its own commits and, every so many, runs
// a PASSIVE checkpoint on the next turn of the event loop, after the committing caller has
// its answer. SQLite's own checkpoint stays on at a higher threshold as a backstop for large
// transactions (batches of thousands of jobs), where a few ms inside the commit do not
// matter. A caller that commits in a chain of microtasks without ever letting the event
// loop turn gets the checkpoint inside its commit once the scheduled one has waited an
// interval's commits and STARVED_MS.
//
// How many commits make a checkpoint follows how big the commits are. A checkpoint copies
// and fsyncs every page written since the last one, on the event loop, so its length is
// the loop's longest block: a fixed 128 commits was ~650 pages for one-job commits but
// 1,800-2,700 pages (12-16 ms) once the worker claimed and finished hundreds of jobs a
// commit. Each checkpoint reports the WAL frames it found, and the next interval is scaled
// so that a checkpoint copies about TARGET_PAGES. The frames since the last checkpoint are
// the whole WAL when a writer has started it over since (its header's checkpoint sequence
// moved), else what was added to it (a reader holding an old snapshot keeps SQLite from
// starting it over). Other processes' frames count too: the WAL is theirs as well, and so
// is the copy, so with several writers each checkpoints more often.
//
// Why 4,096 pages and not fewer. A busy store rewrites the same pages over and over (the
// newest pages of the job table and its indexes, an endpoint's health row), and a
// checkpoint copies each of them once however often it was written since the last one;
// each checkpoint also costs two fsyncs. In the outgoing bench row (10,000 messages
// published, their 30,000 deliveries drained), checkpoints of ~512 pages were 353 in all
// and took 843 ms of the event loop (2.5 ms each, at most 6.6); of ~4,096 pages, 49 and
// 340 ms (8 ms each, at most 13).
// The costs: the loop's longest block under such a load grows to about 13 ms, once every
// few hundred ms; the WAL file to about 16 MB; and with synchronous=NORMAL a power cut
// loses up to that many pages of commits, up to 1,024 one-job commits where it was 128
// (acknowledgements commit with FULL by default and are not among them). Moving the copy
// to a thread of its own (tried) did not raise deliveries/s at either size. The outgoing
// row's deliveries/s rose by about 9 % (docs/benchmarks.md).
//
// Only for a database the store opened itself: on a handle the application shares
// (the outbox), its own commits are not counted here and must keep SQLite's default.

import { closeSync, openSync, readSync } from 'node:fs';
import type Database from 'better-sqlite3';

/** WAL pages a checkpoint should copy (16 MB of 4 KB pages): see the header. */
const TARGET_PAGES = 4_096;
/** Commits before the first checkpoint, when the size of a commit is not known yet. */
const FIRST_INTERVAL = 8;
/**
 * The most the interval grows from one checkpoint to the next. A measure can mislead (the
 * first interval holds the migrations' small commits; a burst of big claims can follow
 * quiet one-job traffic), so it shrinks at once but grows step by step.
 */
const MAX_GROWTH = 2;
/** Bounds of the interval: one-job commits (~5 pages) reach the top one. */
const MIN_INTERVAL = 4;
const MAX_INTERVAL = 1_024;
/**
 * A WAL this long, copied whole, has not been started over: a writer starts it over only
 * when no other connection is reading from it, and several processes that read and write
 * all the time (a worker per process beside `mailroom serve`) may never leave it such a
 * moment. PASSIVE checkpoints copy every frame and the file still grows without bound
 * (to 49-59 MB in a few seconds of one-file-many-processes.sqlite.test.ts, never started
 * over). RESTART waits, on this process's event loop and up to RESTART_WAIT_MS, for the
 * readers to finish their reads, and holds off writers meanwhile; then the next write
 * starts the WAL over (the test's peak: 36 MB). Twice a checkpoint's target, so a store
 * whose WAL starts over by itself (one process: the outgoing row's never passed 4,400
 * frames) never pays that wait.
 */
const RESTART_AT_PAGES = 2 * TARGET_PAGES;
/**
 * How long a RESTART waits for readers, in place of the store's busy timeout: another
 * process's read ends within milliseconds, but a reader in this process (an application's
 * own handle on the file, in a transaction across an await) cannot end while the thread
 * waits, so the whole wait is a stall. After such a wait comes back busy, the next RESTART
 * waits for the WAL to grow by another RESTART_AT_PAGES.
 */
const RESTART_WAIT_MS = 50;
/** SQLite's own checkpoint, for what the commit count misses (big transactions). */
const BACKSTOP_AUTOCHECKPOINT_PAGES = 16_384;
/**
 * A scheduled checkpoint that has waited this long for its turn, with an interval's commits
 * made since, runs inside the next commit: the event loop is starved. A caller that
 * enqueues in a chain of microtasks never lets it turn, and under synchronous=NORMAL
 * everything since the last checkpoint is lost to a power cut (the power-loss test's
 * first enqueuer lost every enqueue since it started, up to the backstop). Counting
 * commits alone cannot tell that from a turn that is merely busy (hundreds of callers
 * committing in one turn); time alone would let a fast chain run past the backstop. This
 * bounds the window to about two intervals (~8,000 pages), and a busy turn shorter than
 * STARVED_MS never gets the checkpoint inside a caller.
 */
const STARVED_MS = 50;

/** What `PRAGMA wal_checkpoint` answers: frames in the WAL, and how many of them are now in the database. */
interface CheckpointResult {
  readonly busy: number;
  readonly log: number;
  readonly checkpointed: number;
}

export class WalCheckpointer {
  private commits = 0;
  /** Commits per checkpoint, scaled after each one to copy about TARGET_PAGES. */
  private interval = FIRST_INTERVAL;
  /** The WAL's frames and generation at the last checkpoint that answered, or null before the first. */
  private last: { readonly frames: number; readonly generation: number | null } | null = null;
  /** Commits since the last checkpoint that measured something (a busy one does not). */
  private unmeasuredCommits = 0;
  private scheduled: NodeJS.Immediate | null = null;
  /** When the scheduled checkpoint was asked for (performance.now()); it was at commit `interval`. */
  private scheduledAtMs = 0;
  private isStopped = false;
  /** WAL frames from which a checkpoint that copied them all goes on to a RESTART (see RESTART_AT_PAGES). */
  private restartAtFrames = RESTART_AT_PAGES;

  constructor(private readonly db: Database.Database) {
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
  }

  /** Called after each commit of the store's own write transactions. */
  afterCommit(): void {
    if (this.isStopped) return;
    ++this.commits;
    if (this.scheduled !== null) {
      // Scheduled when the count reached the interval: another interval's commits since.
      const waitedOut = this.commits >= 2 * this.interval && performance.now() - this.scheduledAtMs >= STARVED_MS;
      if (waitedOut) {
        // The scheduled one never got its turn: the event loop is starved. Now, in this caller.
        this.checkpoint();
      }
      return;
    }
    if (this.commits < this.interval) return;
    this.scheduled = setImmediate(() => this.checkpoint());
    this.scheduledAtMs = performance.now();
  }

  /** No checkpoints after this (the store is closing its handle). */
  stop(): void {
    this.isStopped = true;
    this.cancelScheduled();
  }

  private checkpoint(): void {
    // A starved caller's checkpoint replaces the scheduled one.
    this.cancelScheduled();
    this.unmeasuredCommits += this.commits;
    this.commits = 0;
    if (this.isStopped || !this.db.open) return;
    let result: CheckpointResult | undefined;
    try {
      // PASSIVE never waits for readers or writers of other connections; what it cannot
      // copy now the next one will.
      result = (this.db.pragma('wal_checkpoint(PASSIVE)') as CheckpointResult[])[0];
    } catch {
      // A checkpoint is an optimisation; SQLite's own (the backstop) still runs.
      return;
    }
    // -1: another connection was checkpointing (busy), or the database is not in WAL
    // mode. Nothing measured; these commits count toward the next measure.
    if (result === undefined || result.log < 0) return;
    if (result.log < RESTART_AT_PAGES) this.restartAtFrames = RESTART_AT_PAGES; // started over since
    else if (result.log >= this.restartAtFrames && result.checkpointed === result.log) this.restart(result.log);
    this.resize(result.log, walGeneration(this.db.name));
  }

  /**
   * Waits (up to RESTART_WAIT_MS) for every reader of the WAL to move to the database file,
   * so that the next write starts the WAL over; when they did not, the next try waits for
   * the WAL to grow further. See RESTART_AT_PAGES.
   */
  private restart(frames: number): void {
    const busyTimeoutMs = this.db.pragma('busy_timeout', { simple: true }) as number;
    let isBusy = true;
    try {
      this.db.pragma(`busy_timeout = ${Math.min(busyTimeoutMs, RESTART_WAIT_MS)}`);
      isBusy = (this.db.pragma('wal_checkpoint(RESTART)') as CheckpointResult[])[0]?.busy !== 0;
    } catch {
      // As for PASSIVE: an optimisation; a later checkpoint tries again.
    } finally {
      this.db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    }
    this.restartAtFrames = isBusy ? frames + RESTART_AT_PAGES : RESTART_AT_PAGES;
  }

  /** Scales the interval so that the next checkpoint copies about TARGET_PAGES. */
  private resize(frames: number, generation: number | null): void {
    const { last } = this;
    this.last = { frames, generation };
    const isSameGeneration = last !== null && generation !== null && generation === last.generation;
    const pages = isSameGeneration ? frames - last.frames : frames;
    const commits = this.unmeasuredCommits;
    this.unmeasuredCommits = 0;
    if (pages <= 0 || commits <= 0) return; // nothing new: no measure
    const scaled = Math.round((commits * TARGET_PAGES) / pages);
    this.interval = Math.min(MAX_INTERVAL, this.interval * MAX_GROWTH, Math.max(MIN_INTERVAL, scaled));
  }

  private cancelScheduled(): void {
    if (this.scheduled === null) return;
    clearImmediate(this.scheduled);
    this.scheduled = null;
  }
}

/**
 * The WAL's checkpoint sequence (its header's bytes 12-15), which moves each time a writer
 * starts the WAL over; null when it cannot be read. SQLite takes no locks on the WAL file
 * itself (a WAL database locks through its -shm file), so opening and closing it here
 * cannot drop a lock of this process's connection.
 */
function walGeneration(databasePath: string): number | null {
  let fd: number | null = null;
  try {
    fd = openSync(`${databasePath}-wal`, 'r');
    const header = Buffer.alloc(16);
    return readSync(fd, header, 0, 16, 0) === 16 ? header.readUInt32BE(12) : null;
  } catch {
    return null;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
