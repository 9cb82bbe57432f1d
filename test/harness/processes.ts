// Real child processes for crash tests: a worker process we can SIGKILL, SIGSTOP or SIGTERM.
// Children run TypeScript through tsx, so the tests need no build step.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const WORKER_SCRIPT = fileURLToPath(new URL('../fixtures/worker-process.ts', import.meta.url));

export interface WorkerProcess {
  readonly child: ChildProcess;
  /** Every stdout line so far. */
  readonly lines: string[];
  /** Resolves with the first line (now or later) that matches. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves with the exit code (null when killed) and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children = new Set<ChildProcess>();

export interface WorkerProcessOptions {
  readonly url: string;
  readonly leaseMs?: number;
  readonly concurrency?: number;
  readonly stopTimeoutMs?: number;
  readonly prefetch?: number;
  /** File the `ledger` task appends its effects to. */
  readonly ledgerPath?: string;
}

export function spawnWorker(options: WorkerProcessOptions): WorkerProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', WORKER_SCRIPT], {
    env: {
      ...process.env,
      MAILROOM_TEST_DB: options.url,
      MAILROOM_TEST_LEASE_MS: String(options.leaseMs ?? 1_000),
      MAILROOM_TEST_CONCURRENCY: String(options.concurrency ?? 1),
      MAILROOM_TEST_STOP_TIMEOUT_MS: String(options.stopTimeoutMs ?? 3_000),
      MAILROOM_TEST_PREFETCH: String(options.prefetch ?? 0),
      MAILROOM_TEST_LEDGER: options.ledgerPath ?? '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const listener of listeners) listener(line);
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      if (code !== 0 && code !== null && stderr) process.stderr.write(`worker process stderr:\n${stderr}\n`);
      resolve({ code, signal });
    });
  });
  return {
    child,
    lines,
    exited,
    waitForLine(match, timeoutMs = 15_000) {
      const found = lines.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          listeners.delete(listener);
          reject(new Error(`worker process printed no matching line within ${timeoutMs} ms; lines: ${lines.join(' | ')}; stderr: ${stderr}`));
        }, timeoutMs);
        const listener = (line: string) => {
          if (!match(line)) return;
          clearTimeout(timer);
          listeners.delete(listener);
          resolve(line);
        };
        listeners.add(listener);
        void exited.then(() => {
          if (!listeners.has(listener)) return;
          clearTimeout(timer);
          listeners.delete(listener);
          reject(new Error(`worker process exited before a matching line; lines: ${lines.join(' | ')}; stderr: ${stderr}`));
        });
      });
    },
  };
}

/** SIGKILL any child a test left running. */
export function killAllWorkers(): void {
  for (const child of children) child.kill('SIGKILL');
  children.clear();
}
