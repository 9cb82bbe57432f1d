// The task directory's snapshot: read again after 5 s, or after half a second for a while
// after an enqueue first asked for a type it lacked (a worker that started after this
// process), and no longer than that window for a type nobody ever records.

import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  TASK_DIRECTORY_FAST_REFRESH_WINDOW_MS,
  TASK_DIRECTORY_MISSING_REFRESH_MS,
  TASK_DIRECTORY_REFRESH_MS,
  TaskDirectory,
} from '../../src/core/task-directory.js';
import type { StoredTask } from '../../src/store/store.js';

afterEach(() => vi.useRealTimers());

describe('TaskDirectory', () => {
  it('reads again within half a second of meeting an unknown type, for a bounded window, then every 5 s', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    let reads = 0;
    let recorded: StoredTask[] = [];
    const directory = new TaskDirectory({ taskList: async () => (reads++, recorded) }, () => undefined);
    await directory.load();
    expect(directory.refreshIfStale()).toBeUndefined();
    expect(directory.get('report')).toBeUndefined(); // asked for, missing: the window opens

    vi.advanceTimersByTime(TASK_DIRECTORY_MISSING_REFRESH_MS);
    recorded = [{ type: 'report', queue: 'reports', keyed: false, maxAttempts: 3, recordedAt: new Date() }];
    await directory.refreshIfStale();
    expect(reads).toBe(2);
    expect(directory.get('report')?.queue).toBe('reports');

    // A type nobody records keeps the fast reads only for the window.
    expect(directory.get('never_recorded')).toBeUndefined();
    let fastReads = 0;
    for (let elapsed = 0; elapsed < 2 * TASK_DIRECTORY_FAST_REFRESH_WINDOW_MS; elapsed += TASK_DIRECTORY_MISSING_REFRESH_MS) {
      vi.advanceTimersByTime(TASK_DIRECTORY_MISSING_REFRESH_MS);
      const refreshing = directory.refreshIfStale();
      if (refreshing) {
        await refreshing;
        if (elapsed < TASK_DIRECTORY_FAST_REFRESH_WINDOW_MS) fastReads++;
        expect(directory.get('never_recorded')).toBeUndefined(); // asked again: no new window
      }
    }
    expect(fastReads).toBeGreaterThanOrEqual(TASK_DIRECTORY_FAST_REFRESH_WINDOW_MS / TASK_DIRECTORY_MISSING_REFRESH_MS - 2);
    // After it, every 5 s: at most one read in the last 4.5 s.
    const before = reads;
    vi.advanceTimersByTime(TASK_DIRECTORY_REFRESH_MS - TASK_DIRECTORY_MISSING_REFRESH_MS);
    const refreshing = directory.refreshIfStale();
    if (refreshing) await refreshing;
    expect(reads - before).toBeLessThanOrEqual(1);
    vi.advanceTimersByTime(TASK_DIRECTORY_MISSING_REFRESH_MS);
    expect(directory.refreshIfStale()).toBeUndefined();
  });
});
