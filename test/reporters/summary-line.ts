// Prints one plain closing line, `tests: N passed, N failed, N skipped`, after vitest's own
// summary: a line any CI log reader understands without knowing vitest's format.

import type { Reporter } from 'vitest/reporters';

type Task = { type: string; mode?: string; result?: { state?: string }; tasks?: Task[] };

export default class SummaryLineReporter implements Reporter {
  onFinished(files: Task[] = [], errors: unknown[] = []): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const visit = (task: Task) => {
      if (task.tasks) task.tasks.forEach(visit);
      if (task.type !== 'test') return;
      if (task.mode === 'skip' || task.mode === 'todo') skipped++;
      else if (task.result?.state === 'pass') passed++;
      else if (task.result?.state === 'fail') failed++;
      else skipped++;
    };
    files.forEach(visit);
    // A file that failed to load has no tests but must still count as a failure.
    for (const file of files) if (file.result?.state === 'fail' && !file.tasks?.length) failed++;
    failed += errors.length;
    console.log(`tests: ${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
