// How the SQLite store runs statements: one connection, BEGIN IMMEDIATE for every write,
// prepared statements cached by block name, group commit for acknowledgements, and lock
// retries (the SQLite counterpart of postgres/query-runner.ts).
//
// better-sqlite3 is synchronous, so each write runs its whole transaction in one
// synchronous call and the write lock is never held across an `await`. When another
// process holds the lock past the (short) busy timeout we retry asynchronously with
// backoff, so a waiting writer does not freeze the event loop, until a deadline, then give
// up with StoreUnavailableError (ingress turns that into 503 + Retry-After).

import { setTimeout as sleep } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { MailroomError } from '../../core/errors.js';
import { DEFAULT_LOCK_DEADLINE_MS, StoreClosedError, StoreUnavailableError } from '../errors.js';
import { sqlBlock } from '../sql-file.js';
import type { SqlBlocks } from '../sql-file.js';
import type { SqliteConnection, SynchronousLevel } from './sqlite-connection.js';
import { interpretSqliteError, isSqliteRetryable } from './interpret-error.js';
import { WalCheckpointer } from './wal-checkpointer.js';

/** Durability class of a write: acknowledgements must survive power loss; bookkeeping may not. */
export type WriteClass = 'ack' | 'bookkeeping';

/**
 * Runs the acknowledgements of one group commit that declared themselves mergeable, as
 * one write inside the shared transaction; returns each one's result, in order.
 */
export type MergedWrite<M> = (merges: readonly M[]) => unknown[];

/** The SQLite store's clock: this process's, unless a test pins `now`. */
export function nowMs(now: Date | undefined): number {
  return now ? now.getTime() : Date.now();
}

export class SqliteWriteEngine<M> {
  readonly db: Database.Database;
  private readonly ackSynchronous: SynchronousLevel;
  private readonly lockDeadlineMs: number;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly runInTransaction: Database.Transaction<(fn: () => unknown) => unknown>;
  private currentSynchronous: SynchronousLevel | null = null;
  /** Acknowledgements waiting for their group commit (ackWrite). */
  private readonly pendingAcks: Array<PendingWrite<M>> = [];
  private isClosed = false;
  /** The one close, once started: every close() call waits for it. */
  private closing: Promise<void> | null = null;
  /** Checkpoints between callers; null on a handle the application shares. */
  private readonly checkpointer: WalCheckpointer | null;

  constructor(
    private readonly connection: SqliteConnection,
    private readonly sql: SqlBlocks,
    private readonly mergedWrite: MergedWrite<M>,
    lockDeadlineMs: number | undefined,
  ) {
    this.db = connection.db;
    this.ackSynchronous = connection.ackSynchronous;
    this.lockDeadlineMs = lockDeadlineMs ?? DEFAULT_LOCK_DEADLINE_MS;
    this.checkpointer = connection.ownsDatabase ? new WalCheckpointer(this.db) : null;
    this.runInTransaction = this.db.transaction((fn: () => unknown) => fn());
    this.setSynchronous(this.ackSynchronous);
  }

  /** The prepared statement of a named block (prepared once per connection). */
  stmt(name: string): Database.Statement {
    let statement = this.statements.get(name);
    if (!statement) {
      this.assertOpen();
      statement = this.db.prepare(sqlBlock(this.sql, name));
      this.statements.set(name, statement);
    }
    return statement;
  }

  /**
   * A statement whose single VALUES row is repeated `rows` times (a multi-row insert),
   * prepared once per row count.
   */
  stmtRepeatingValues(name: string, rows: number): Database.Statement {
    const key = `${name}*${rows}`;
    let statement = this.statements.get(key);
    if (!statement) {
      this.assertOpen();
      const sql = sqlBlock(this.sql, name).trim().replace(/;$/, '');
      const at = sql.lastIndexOf('VALUES');
      const row = sql.slice(at + 'VALUES'.length).trim();
      statement = this.db.prepare(`${sql.slice(0, at)}VALUES ${Array(rows).fill(row).join(', ')}`);
      this.statements.set(key, statement);
    }
    return statement;
  }

  assertOpen(): void {
    if (this.isClosed || !this.db.open) throw new StoreClosedError('sqlite');
  }

  /**
   * Closes the engine. Acknowledgements asked for before close, waiting for their group's
   * commit, are committed first, as they would have been (lock retries and error mapping
   * included), so that a call made before close() is answered as usual. Inside a caller's
   * open transaction they are refused instead: that transaction could still roll back what
   * they would be told was stored. A second call waits for the same close: closing the
   * handle at once would cut off the first call's flush while it waits out another
   * connection's lock.
   */
  close(): Promise<void> {
    return (this.closing ??= this.closeOnce());
  }

  private async closeOnce(): Promise<void> {
    if (this.pendingAcks.length > 0) {
      if (this.db.open && !this.db.inTransaction) await this.flushGroup();
      else for (const item of this.pendingAcks.splice(0)) item.reject(new StoreClosedError('sqlite'));
    }
    this.isClosed = true;
    this.statements.clear();
    this.checkpointer?.stop();
    if (this.connection.ownsDatabase) this.db.close();
  }

  /** One write transaction, synchronously; nested inside a caller's transaction when one is open. */
  writeSync<T>(writeClass: WriteClass, fn: () => T): T {
    this.assertOpen();
    if (this.db.inTransaction) return this.runInTransaction(fn) as T;
    this.setSynchronous(writeClass === 'ack' ? this.ackSynchronous : 'NORMAL');
    const result = this.runInTransaction.immediate(fn) as T;
    this.checkpointer?.afterCommit();
    return result;
  }

  async write<T>(writeClass: WriteClass, fn: () => T): Promise<T> {
    return this.withLockRetry(() => this.writeSync(writeClass, fn));
  }

  async read<T>(fn: () => T): Promise<T> {
    return this.withLockRetry(() => {
      this.assertOpen();
      return this.db.inTransaction ? fn() : (this.runInTransaction.deferred(fn) as T);
    });
  }

  /**
   * Group commit for acknowledgements. With FULL durability every commit costs an fsync,
   * so acknowledgements asked for in the same turn of the event loop (100 concurrent HTTP
   * requests, say) share one transaction and one fsync. Each runs in its own savepoint, so
   * one caller's error (a key conflict) rolls back only its own writes; every caller is
   * answered only after the shared commit. Inside a caller's open transaction (the outbox)
   * writes run at once instead.
   *
   * With FULL the batch closes at the end of the event-loop turn (setImmediate), so
   * requests arriving in separate I/O callbacks share the fsync. With NORMAL a commit is
   * cheap and a turn's wait would slow a caller enqueueing one job at a time, so the batch
   * closes after the current microtasks: callers that enqueue concurrently from promise
   * continuations (Promise.all, a loop of workers) still share one commit.
   *
   * @param merge Set when this write may share one statement with other callers' (see
   *   mergedWrite); `fn` must then do exactly what mergedWrite does for it alone.
   */
  ackWrite<T>(fn: () => T, merge?: M): Promise<T> {
    return this.groupWrite(fn, merge, this.ackSynchronous === 'FULL' ? 'turn' : 'microtasks');
  }

  private groupWrite<T>(fn: () => T, merge: M | undefined, closes: 'turn' | 'microtasks'): Promise<T> {
    if (this.db.inTransaction) return this.write('ack', fn);
    const pending = this.pendingAcks;
    return new Promise<T>((resolve, reject) => {
      pending.push({ run: fn, resolve: resolve as (value: unknown) => void, reject, merge });
      if (pending.length !== 1) return;
      if (closes === 'turn') setImmediate(() => void this.flushGroup());
      else queueMicrotask(() => void this.flushGroup());
    });
  }

  private async flushGroup(): Promise<void> {
    const batch = this.pendingAcks.splice(0);
    if (batch.length === 0) return;
    if (batch.length === 1) {
      // Alone in its transaction: no savepoint needed to keep its failure its own.
      const [item] = batch;
      await this.write('ack', item!.run).then(item!.resolve, item!.reject);
      return;
    }
    let results: GroupResult[];
    try {
      results = await this.write('ack', () => {
        // In call order, so ids follow it across the batch: each run of consecutive
        // mergeable callers shares one insert, everyone else gets a savepoint of their own.
        const out: GroupResult[] = [];
        for (let start = 0; start < batch.length; ) {
          let end = start;
          while (end < batch.length && batch[end]!.merge !== undefined) end++;
          const run = batch.slice(start, Math.max(end, start + 1));
          const merged = run.length >= 2 ? this.runMerged(run) : null;
          run.forEach((item, index) => out.push(merged ? { ok: true, value: merged[index] } : this.runInSavepoint(item)));
          start += run.length;
        }
        return out;
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
      return;
    }
    batch.forEach((item, index) => settle(item, results[index]!));
  }

  /** One caller of a group commit alone: a SAVEPOINT inside the shared transaction. */
  private runInSavepoint(item: PendingWrite<M>): GroupResult {
    try {
      return { ok: true, value: this.runInTransaction(item.run) };
    } catch (error) {
      // Some errors (a full disk, an I/O error) make SQLite roll back the whole
      // transaction, not the savepoint: the callers after this one would each commit on
      // their own, and those before it were rolled back. The group fails as a whole.
      if (!this.db.inTransaction) throw error;
      return { ok: false, error };
    }
  }

  /**
   * The mergeable callers of a group commit as one write, in a savepoint. Nothing in it
   * can conflict; if it fails anyway, its savepoint rolls back and every caller runs
   * alone as before (null).
   */
  private runMerged(run: ReadonlyArray<PendingWrite<M>>): unknown[] | null {
    try {
      return this.runInTransaction(() => this.mergedWrite(run.map((item) => item.merge!))) as unknown[];
    } catch {
      return null;
    }
  }

  private setSynchronous(level: SynchronousLevel): void {
    if (this.currentSynchronous === level) return;
    this.db.pragma(`synchronous = ${level}`);
    this.currentSynchronous = level;
  }

  private async withLockRetry<T>(attempt: () => T): Promise<T> {
    const deadline = Date.now() + this.lockDeadlineMs;
    let delayMs = 5;
    for (;;) {
      try {
        return attempt();
      } catch (error) {
        if (!isSqliteRetryable(error)) throw interpretSqliteError(error);
        if (Date.now() + delayMs > deadline) {
          throw new StoreUnavailableError(
            `SQLite stayed locked by another connection for ${this.lockDeadlineMs} ms`,
            { cause: error, retryAfterMs: 1_000 },
          );
        }
        await sleep(delayMs + Math.random() * delayMs);
        delayMs = Math.min(delayMs * 2, 100);
      }
    }
  }
}

/** A write waiting for its group commit; `merge` marks one that can share its inserts. */
interface PendingWrite<M> {
  readonly run: () => unknown;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  readonly merge: M | undefined;
}

/** What one caller of a group commit gets back. */
type GroupResult = { ok: true; value: unknown } | { ok: false; error: unknown };

/** Answers one caller of a group commit with its own result. */
function settle<M>(item: PendingWrite<M>, result: GroupResult): void {
  if (result.ok) item.resolve(result.value);
  else item.reject(result.error instanceof MailroomError ? result.error : interpretSqliteError(result.error));
}
