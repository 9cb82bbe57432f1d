// The leak guard itself (test/harness/leak-guard.ts): it sees a worker, an ingress HTTP
// server and a pg pool from open to close, and in a real vitest run it fails the file
// that leaves a worker running while passing the file that stops its own.

import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { openResources } from './harness/leak-guard.js';
import { isPostgresAvailable, PG_URL } from './harness/postgres.js';
import { sqliteHarness } from './harness/sqlite.js';
import { closeAll, openIngressMailroom, startIngress } from './ingress/ingress-kit.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const VITEST = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url));
const FIXTURE_CONFIG = 'test/fixtures/leak-guard/vitest.config.ts';

const kinds = () => openResources().map((resource) => resource.kind);

describe('the leak guard', () => {
  afterEach(() => closeAll(sqliteHarness));

  it('sees a worker from mr.work() until it stops', async () => {
    const { mr } = await openIngressMailroom(sqliteHarness);
    mr.task('noop', async () => undefined);
    const worker = mr.work({ pollMs: 50 });
    expect(kinds()).toContain('worker');
    await worker.stop({ timeoutMs: 1_000 });
    expect(kinds()).not.toContain('worker');
  });

  it('sees an ingress HTTP server from listen until it closes', async () => {
    const { mr } = await openIngressMailroom(sqliteHarness);
    const { ingress } = await startIngress(mr, {});
    expect(openResources().filter((resource) => resource.kind === 'http-server').map((resource) => resource.label)).toEqual([
      expect.stringMatching(/^HTTP server on http:\/\/127\.0\.0\.1:\d+$/),
    ]);
    await ingress.close({ timeoutMs: 1_000 });
    expect(kinds()).not.toContain('http-server');
  });

  it.skipIf(!isPostgresAvailable)('sees a pg pool from its first connection until it ends', async () => {
    const pool = new pg.Pool({ connectionString: PG_URL, max: 1 });
    expect(kinds()).not.toContain('pg-pool');
    await pool.query('SELECT 1');
    expect(kinds()).toContain('pg-pool');
    await pool.end();
    expect(kinds()).not.toContain('pg-pool');
  });

  it('fails a test file that leaves a worker running and passes the one that stops it', async () => {
    const result = await run(process.execPath, [VITEST, 'run', '--config', FIXTURE_CONFIG], { cwd: ROOT, env: { ...process.env, CI: '', NO_COLOR: '1' } }).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, output: error.stdout + error.stderr }),
    );
    expect(result.code).toBe(1);
    expect(result.output).toMatch(/FAIL\s+test\/fixtures\/leak-guard\/leaks-a-worker\.fixture\.ts/);
    expect(result.output).toMatch(/This test file left 1 resource\(s\) open[^]*- worker: worker \S+, opened at[^]*leaks-a-worker\.fixture\.ts/);
    expect(result.output).toMatch(/✓ test\/fixtures\/leak-guard\/closes-its-worker\.fixture\.ts/);
    expect(result.output).toMatch(/Test Files\s+1 failed \| 1 passed \(2\)/);
  });
});
