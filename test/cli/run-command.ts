// Runs the CLI in-process (runCli, the same dispatcher the bin uses) with captured streams,
// a controllable stop signal, and an environment that cannot leak the developer's own
// MAILROOM_DB or config into a test.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/run-cli.js';
import type { CliIo } from '../../src/cli/command.js';

export interface CommandResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface RunningCommand {
  /** Resolves when the command returns. */
  readonly done: Promise<CommandResult>;
  /** Everything written to stdout so far. */
  stdout(): string;
  /** Deliver SIGTERM (or another signal) through io.stopSignal. */
  signal(name?: NodeJS.Signals): void;
}

const tempDirs: string[] = [];

/** An empty working directory (no mailroom.config.js in it), removed by removeTempDirs(). */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-cli-'));
  tempDirs.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

export function startCommand(argv: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): RunningCommand {
  const out = new PassThrough();
  const err = new PassThrough();
  let stdout = '';
  let stderr = '';
  out.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  err.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  let deliver!: (signal: NodeJS.Signals) => void;
  const stopSignal = new Promise<NodeJS.Signals>((resolve) => (deliver = resolve));
  const io: CliIo = {
    stdout: out,
    stderr: err,
    env: { MAILROOM_LOG_LEVEL: 'silent', ...options.env },
    cwd: options.cwd ?? tempDir(),
    stopSignal,
  };
  const done = runCli(argv, io).then((code) => ({ code, stdout, stderr }));
  return { done, stdout: () => stdout, signal: (name = 'SIGTERM') => deliver(name) };
}

/** Runs a command to completion. */
export function runCommand(argv: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CommandResult> {
  return startCommand(argv, options).done;
}

/** Runs a `--json` command, asserts exit 0, and parses its stdout. */
export async function runJson<T = any>(argv: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<T> {
  const result = await runCommand([...argv, '--json'], options);
  if (result.code !== 0) throw new Error(`mailroom ${argv.join(' ')} exited ${result.code}: ${result.stderr}`);
  return JSON.parse(result.stdout) as T;
}
