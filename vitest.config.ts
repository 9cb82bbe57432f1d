import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Fails a test file that leaves a worker, an HTTP server or a pg pool open.
    setupFiles: ['./test/harness/leak-guard-setup.ts'],
    // Type-level tests of the public API (*.test-d.ts) go through tsc alongside the run.
    typecheck: { enabled: true, include: ['test/**/*.test-d.ts'], tsconfig: './test/types/tsconfig.json' },
    // Real databases and processes: give each test room, but never hang CI.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two cores: two test files at a time keeps crash and timing tests honest.
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default', './test/reporters/summary-line.ts'],
  },
});
