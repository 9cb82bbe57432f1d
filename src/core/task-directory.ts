// What this process knows of task types it did not register: the queue, keyed flag and
// maxAttempts the last worker to start recorded in the store (migrations 0015, 0016).
// Enqueue builds jobs synchronously (a SQLite transaction's tx.enqueue must), so it reads
// a snapshot, and reads the store again first when the snapshot is older than REFRESH_MS: on SQLite
// synchronously, on PostgreSQL awaited before any transaction is open. Only inside a
// PostgreSQL transaction is the read left for the next enqueue (awaiting it there could
// wait for a pool connection that the transactions themselves hold).

import type { StoredTask } from '../store/store.js';

/** The migration that creates the directory's table (0015_task_directory.sql). */
export const TASK_DIRECTORY_MIGRATION = 15;
/** The migration that adds each type's attempt budget to it (0016_task_max_attempts.sql). */
export const TASK_BUDGET_MIGRATION = 16;

/** How old a snapshot may be before an enqueue reads the store again. */
export const TASK_DIRECTORY_REFRESH_MS = 5_000;
/**
 * The same for a while after an enqueue first asked for a type the snapshot lacks: a web
 * process started before its workers learns their record within this, not after 5 s of
 * sending their jobs to the default queue, where a worker of another queue never sees
 * them. For FAST_REFRESH_WINDOW_MS after each new missing type, so a type no worker ever
 * records (one only this process's callers name) does not keep it reading twice a second.
 */
export const TASK_DIRECTORY_MISSING_REFRESH_MS = 500;
export const TASK_DIRECTORY_FAST_REFRESH_WINDOW_MS = 30_000;

interface TaskDirectorySource {
  taskList(): Promise<StoredTask[]>;
}

export class TaskDirectory {
  private snapshot = new Map<string, StoredTask>();
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | null = null;
  /** Types enqueues asked for that no snapshot had yet (each starts a fast-refresh window once). */
  private readonly missingTypes = new Set<string>();
  /** Until then the snapshot goes stale after MISSING_REFRESH_MS. */
  private fastRefreshUntil = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly source: TaskDirectorySource,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The type as recorded when the snapshot was taken; undefined when no worker recorded it. */
  get(type: string): StoredTask | undefined {
    const task = this.snapshot.get(type);
    if (task === undefined && !this.missingTypes.has(type)) {
      this.missingTypes.add(type);
      this.fastRefreshUntil = Date.now() + TASK_DIRECTORY_FAST_REFRESH_WINDOW_MS;
    }
    return task;
  }

  /** Read the store again now. A failed read keeps the old snapshot and waits a full interval before the next try. */
  load(): Promise<void> {
    this.loading ??= this.source
      .taskList()
      .then(
        (tasks) => this.take(tasks),
        (error: unknown) => this.failed(error),
      )
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }

  /**
   * The read to wait for before an enqueue reads a stale snapshot; undefined when it is
   * fresh, so the caller awaits nothing (an await of undefined still costs the enqueue a
   * turn of the microtask queue, measurable with 100 callers). Never await it while holding
   * a transaction's connection: the read needs another of the pool's.
   * @example const refreshing = directory.refreshIfStale(); if (refreshing) await refreshing;
   */
  refreshIfStale(): Promise<void> | undefined {
    return this.isStale() ? this.load() : undefined;
  }

  /** A stale snapshot read synchronously (SQLite: a WAL read, no lock, and no await before the enqueue's insert). */
  refreshSyncIfStale(read: () => StoredTask[]): void {
    if (!this.isStale()) return;
    try {
      this.take(read());
    } catch (error) {
      this.failed(error);
    }
  }

  /** Start a read for the next enqueue without waiting for it (inside a PostgreSQL transaction). */
  refreshLater(): void {
    if (this.isStale()) void this.load();
  }

  /** Resolves when no read is in flight (close waits for it before the store closes). */
  settled(): Promise<void> {
    return this.loading ?? Promise.resolve();
  }

  private isStale(): boolean {
    const now = Date.now();
    return now - this.loadedAt >= (now < this.fastRefreshUntil ? TASK_DIRECTORY_MISSING_REFRESH_MS : TASK_DIRECTORY_REFRESH_MS);
  }

  private take(tasks: readonly StoredTask[]): void {
    this.snapshot = new Map(tasks.map((task) => [task.type, task]));
    this.loadedAt = Date.now();
    for (const task of tasks) this.missingTypes.delete(task.type);
  }

  /** A store that is down, or a schema before 0015, is then not asked again on every enqueue. */
  private failed(error: unknown): void {
    this.loadedAt = Date.now();
    this.fastRefreshUntil = Number.NEGATIVE_INFINITY;
    this.onError(error);
  }
}
