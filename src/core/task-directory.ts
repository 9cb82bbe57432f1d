// What this process knows of task types it did not register: the queue and keyed flag the
// last worker to start recorded in the store (migration 0015). Enqueue builds jobs
// synchronously (a SQLite transaction's tx.enqueue must), so it reads a snapshot; the
// async entry points refresh a snapshot older than REFRESH_MS first, and the synchronous
// ones start a refresh for the next call. A worker that starts with a new definition is
// seen by every process within that time.

import type { StoredTask } from '../store/store.js';

/** The migration that creates the directory's table (0015_task_directory.sql). */
export const TASK_DIRECTORY_MIGRATION = 15;

/** How old a snapshot may be before an enqueue reads the store again. */
export const TASK_DIRECTORY_REFRESH_MS = 5_000;

interface TaskDirectorySource {
  taskList(): Promise<StoredTask[]>;
}

export class TaskDirectory {
  private snapshot = new Map<string, StoredTask>();
  private loadedAt = Number.NEGATIVE_INFINITY;
  private loading: Promise<void> | null = null;

  constructor(
    private readonly source: TaskDirectorySource,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** The type as recorded when the snapshot was taken; undefined when no worker recorded it. */
  get(type: string): StoredTask | undefined {
    return this.snapshot.get(type);
  }

  /** Read the store again now (Mailroom.open, and after this process's own workers record). */
  load(): Promise<void> {
    this.loading ??= this.source
      .taskList()
      .then((tasks) => {
        this.snapshot = new Map(tasks.map((task) => [task.type, task]));
        this.loadedAt = Date.now();
      })
      .finally(() => {
        this.loading = null;
      });
    return this.loading;
  }

  /**
   * The read to wait for before an enqueue reads a stale snapshot; undefined when it is
   * fresh, so the caller awaits nothing (an await of undefined still costs the enqueue a
   * turn of the microtask queue, measurable with 100 callers). A failed read keeps the old
   * snapshot (the enqueue's own write reports a store that is down).
   * @example const refreshing = directory.refreshIfStale(); if (refreshing) await refreshing;
   */
  refreshIfStale(): Promise<void> | undefined {
    if (Date.now() - this.loadedAt < TASK_DIRECTORY_REFRESH_MS) return undefined;
    return this.load().catch(this.onError);
  }

  /** Resolves when no read is in flight (close waits for it before the store closes). */
  settled(): Promise<void> {
    return this.loading?.catch(() => undefined) ?? Promise.resolve();
  }

  /** For the synchronous paths: refresh in the background for the next enqueue. */
  refreshLater(): void {
    if (Date.now() - this.loadedAt >= TASK_DIRECTORY_REFRESH_MS) this.load().catch(this.onError);
  }
}
