// Vitest setup file (vitest.config.ts `setupFiles`): installs the leak guard before every
// test file and, after the file's own afterAll hooks, fails the file if a worker, an HTTP
// server or a pg pool it opened is still open. A per-file check rather than per-test:
// many files open a Mailroom in beforeAll and close it in afterAll, which is fine.

import { afterAll } from 'vitest';
import { describeLeaks, installLeakGuard, releaseLeaks } from './leak-guard.js';

installLeakGuard();

// Registered before the test file's own hooks, so (hooks run as a stack) it runs after them.
afterAll(async () => {
  const leaks = await releaseLeaks();
  if (leaks.length > 0) throw new Error(describeLeaks(leaks));
});
