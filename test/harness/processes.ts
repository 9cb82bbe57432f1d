// Real child processes for crash and fault tests: a worker process (or any TypeScript
// script) we can SIGKILL, SIGSTOP or SIGTERM, with its stdout lines to wait on. Children run
// TypeScript through tsx, so the tests need no build step.

import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const WORKER_SCRIPT = fileURLToPath(new URL('../fixtures/worker-process.ts', import.meta.url));
/** tsx's loader by URL, so a child started in another working directory still finds it. */
const TSX_LOADER = new URL('../../node_modules/tsx/dist/loader.mjs', import.meta.url).href;

export interface Child {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly lines: string[];
  stderr(): string;
  /** Resolves with the first stdout line (now or later) that matches. */
  waitForLine(match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Resolves on exit with the code, the signal and when the test saw the exit. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>;
  kill(signal: NodeJS.Signals): void;
}

const children = new Set<ChildProcess>();

/** Run `script` (TypeScript) with `node --import tsx`. */
export function spawnTsx(script: string, args: readonly string[], env: Record<string, string>, cwd?: string): Child {
  return spawnNode(['--import', TSX_LOADER, script, ...args], env, cwd);
}

/**
 * Run built JavaScript (`dist/`, a plain .mjs) with plain node: it starts in about a third
 * of tsx's time (0.75 s against 2.2 s for `mailroom serve` here), which counts in a test
 * that starts a process dozens of times.
 */
export function spawnBuilt(script: string, args: readonly string[], env: Record<string, string>, cwd?: string): Child {
  return spawnNode([script, ...args], env, cwd);
}

function spawnNode(nodeArgs: readonly string[], env: Record<string, string>, cwd?: string): Child {
  const child = spawn(process.execPath, nodeArgs, {
    env: { ...process.env, ...env },
    cwd,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  const lines: string[] = [];
  const listeners = new Set<(line: string) => void>();
  createInterface({ input: child.stdout! }).on('line', (line) => {
    lines.push(line);
    for (const listener of [...listeners]) listener(line);
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => {
    stderr += chunk;
    if (stderr.length > 100_000) stderr = stderr.slice(-50_000);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; atMs: number }>((resolve) => {
    child.on('exit', (code, signal) => {
      children.delete(child);
      resolve({ code, signal, atMs: Date.now() });
    });
  });
  return {
    child,
    pid: child.pid!,
    lines,
    stderr: () => stderr,
    exited,
    kill: (signal) => {
      child.kill(signal);
    },
    waitForLine(match, timeoutMs = 20_000) {
      const found = lines.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const tail = () => `last lines: ${lines.slice(-5).join(' | ')}; stderr: ${stderr.slice(-2_000)}`;
        const timer = setTimeout(() => {
          listeners.delete(listener);
          reject(new Error(`child ${child.pid} printed no matching line within ${timeoutMs} ms; ${tail()}`));
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
          reject(new Error(`child ${child.pid} exited before a matching line; ${tail()}`));
        });
      });
    },
  };
}

/** SIGKILL every child a test left running (SIGCONT first, in case it was stopped). */
export function killAllChildren(): void {
  for (const child of children) {
    child.kill('SIGCONT');
    child.kill('SIGKILL');
  }
  children.clear();
}

/** The crash tests' name for killAllChildren. */
export const killAllWorkers = killAllChildren;

export interface WorkerProcessOptions {
  readonly url: string;
  readonly leaseMs?: number;
  readonly concurrency?: number;
  readonly stopTimeoutMs?: number;
  readonly prefetch?: number;
  /** File the `ledger` task appends its effects to. */
  readonly ledgerPath?: string;
}

/** A test/fixtures/worker-process.ts child on the store at `url`. */
export function spawnWorker(options: WorkerProcessOptions): Child {
  return spawnTsx(WORKER_SCRIPT, [], {
    MAILROOM_TEST_DB: options.url,
    MAILROOM_TEST_LEASE_MS: String(options.leaseMs ?? 1_000),
    MAILROOM_TEST_CONCURRENCY: String(options.concurrency ?? 1),
    MAILROOM_TEST_STOP_TIMEOUT_MS: String(options.stopTimeoutMs ?? 3_000),
    MAILROOM_TEST_PREFETCH: String(options.prefetch ?? 0),
    MAILROOM_TEST_LEDGER: options.ledgerPath ?? '',
  });
}
