// The exec task with real processes: the event body on stdin, a scrubbed environment,
// bounded output, exit codes (transient unless configured permanent) and the whole
// process group killed when the job is aborted (timeout, shutdown).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isPermanent } from '../../src/core/errors.js';
import type { ExecTaskConfig } from '../../src/config/define-config.js';
import { createExecTask, runCommand } from '../../src/tasks/exec.js';
import { waitFor } from '../harness/wait.js';
import { storedEvent, taskContext } from './task-kit.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-exec-'));
  dirs.push(dir);
  return dir;
}

async function runExec(config: Omit<ExecTaskConfig, 'kind'>, signal?: AbortSignal): Promise<unknown> {
  try {
    await createExecTask({ kind: 'exec', ...config }).run(null, taskContext({ event: storedEvent(), signal }));
    return 'done';
  } catch (error) {
    return error;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('exec task', () => {
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('gives the command the event body on stdin and its ids in a scrubbed environment', async () => {
    const dir = tempDir();
    process.env.MAILROOM_TEST_SERVER_SECRET = 'do-not-pass-me';
    try {
      const result = await runExec({ command: ['sh', '-c', 'cat > body.txt; env > env.txt'], cwd: dir, env: { EXTRA: 'yes' } });
      expect(result).toBe('done');
    } finally {
      delete process.env.MAILROOM_TEST_SERVER_SECRET;
    }
    expect(readFileSync(join(dir, 'body.txt'), 'utf8')).toBe('{"ref":"refs/heads/main"}');
    const env = readFileSync(join(dir, 'env.txt'), 'utf8');
    expect(env).toContain('MAILROOM_EVENT_ID=41');
    expect(env).toContain('MAILROOM_EVENT_TYPE=push');
    expect(env).toContain('EXTRA=yes');
    expect(env).not.toContain('do-not-pass-me');
  });

  it('passes argv as it is, never through a shell', async () => {
    const dir = tempDir();
    expect(await runExec({ command: ['touch', '$(whoami); rm -rf x'], cwd: dir })).toBe('done');
    expect(readFileSync(join(dir, '$(whoami); rm -rf x'), 'utf8')).toBe('');
  });

  it('fails transiently on a non-zero exit, quoting stderr', async () => {
    const error = await runExec({ command: ['sh', '-c', 'echo broken >&2; exit 3'] });
    expect(isPermanent(error)).toBe(false);
    expect((error as Error).message).toBe('sh exited with code 3: broken');
  });

  it('parks the job on a configured permanent exit code', async () => {
    const error = await runExec({ command: ['sh', '-c', 'exit 78'], permanentExitCodes: [78] });
    expect(isPermanent(error)).toBe(true);
  });

  it('keeps only the tail of large output', async () => {
    const result = await runCommand(
      { command: ['sh', '-c', 'head -c 100000 /dev/zero | tr "\\0" a; echo END'], maxOutputBytes: 1_000 },
      Buffer.alloc(0),
      { PATH: process.env.PATH },
      new AbortController().signal,
    );
    expect(result.exitCode).toBe(0);
    expect(result.stdout.length).toBe(1_000);
    expect(result.stdout.endsWith('END\n')).toBe(true);
    expect(result.isOutputTruncated).toBe(true);
  });

  it('kills the whole process group when the job is aborted', async () => {
    const dir = tempDir();
    const controller = new AbortController();
    // The grandchild `sleep` would outlive a kill of `sh` alone.
    const running = runExec({ command: ['sh', '-c', 'sleep 30 & echo $! > child.pid; wait'], cwd: dir }, controller.signal);
    const childPid = await waitFor(() => {
      try {
        return Number(readFileSync(join(dir, 'child.pid'), 'utf8').trim()) || null;
      } catch {
        return null;
      }
    }, { description: 'the grandchild to start' });
    expect(isAlive(childPid)).toBe(true);
    const reason = new Error('timed out');
    controller.abort(reason);
    expect(await running).toBe(reason);
    await waitFor(() => !isAlive(childPid), { description: 'the grandchild to be killed' });
  });

  it('fails with a clear message when the program does not exist', async () => {
    const error = await runExec({ command: ['/nonexistent/deploy.sh'] });
    expect((error as Error).message).toContain('could not start /nonexistent/deploy.sh');
  });
});
