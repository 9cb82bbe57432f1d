// The built-in `exec` task: run a command (argv, never a shell) with the event body on
// stdin, a scrubbed environment (the server's secrets stay in the server), bounded
// captured output, and the whole process group killed on timeout or abort.

import { spawn } from 'node:child_process';
import { Permanent } from '../core/errors.js';
import type { TaskContext, TaskDefinition } from '../core/task-registry.js';
import type { ExecTaskConfig } from '../config/define-config.js';
import { policyOf } from '../config/task-policy.js';

/** 64 KiB of stdout and of stderr: enough for a deploy log's tail, bounded for a job row. */
export const DEFAULT_EXEC_MAX_OUTPUT_BYTES = 65_536;
/** After SIGTERM to the group, how long before SIGKILL. */
export const EXEC_KILL_GRACE_MS = 2_000;
/** Inherited from the server's environment; everything else (tokens, DB URLs, secrets) is dropped. */
const PASSED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'LC_CTYPE', 'TZ', 'TMPDIR', 'USER', 'LOGNAME', 'SYSTEMROOT'];
/** Bytes of stderr quoted in the job's error. */
const ERROR_EXCERPT_BYTES = 1_000;

/** What a finished command left behind. */
export interface ExecResult {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  /** The tail of stdout, at most maxOutputBytes. */
  readonly stdout: string;
  readonly stderr: string;
  readonly isOutputTruncated: boolean;
}

/**
 * A TaskDefinition that runs `config.command` once per job.
 * Exit 0 is done; an exit code in `permanentExitCodes` parks the job; any other failure retries.
 * @example mr.task('deploy', createExecTask({ kind: 'exec', command: ['./deploy.sh'], timeoutMs: 600_000 }));
 */
export function createExecTask(config: ExecTaskConfig): TaskDefinition {
  const permanentExitCodes = new Set(config.permanentExitCodes ?? []);
  return {
    ...policyOf(config),
    async run(payload: unknown, ctx: TaskContext) {
      const stdin = ctx.event ? ctx.event.rawBody : Buffer.from(JSON.stringify(payload ?? null), 'utf8');
      const result = await runCommand(config, stdin, execEnv(config, ctx), ctx.signal);
      const stderrTail = tail(result.stderr, ERROR_EXCERPT_BYTES).trim();
      if (result.exitCode === 0) {
        ctx.log.debug({ jobId: ctx.job.id, command: config.command[0], stdout: tail(result.stdout, ERROR_EXCERPT_BYTES) }, 'exec task finished');
        return;
      }
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const how = result.exitCode !== null ? `exited with code ${result.exitCode}` : `was killed by ${result.signal}`;
      const message = `${config.command[0]} ${how}${stderrTail ? `: ${stderrTail}` : ''}`;
      if (result.exitCode !== null && permanentExitCodes.has(result.exitCode)) throw new Permanent(message);
      throw new Error(message);
    },
  };
}

function execEnv(config: ExecTaskConfig, ctx: TaskContext): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const name of PASSED_ENV) if (process.env[name] !== undefined) env[name] = process.env[name];
  env.MAILROOM_JOB_ID = ctx.job.id;
  env.MAILROOM_ATTEMPT = String(ctx.attempt);
  if (ctx.event) {
    env.MAILROOM_EVENT_ID = ctx.event.id;
    env.MAILROOM_SOURCE = ctx.event.source;
    if (ctx.event.type !== null) env.MAILROOM_EVENT_TYPE = ctx.event.type;
    if (ctx.event.deliveryId !== null) env.MAILROOM_DELIVERY_ID = ctx.event.deliveryId;
  }
  return { ...env, ...config.env };
}

/**
 * Run the command in its own process group, feed `stdin`, keep the tail of its output, and
 * on `signal` kill the whole group (SIGTERM, then SIGKILL after a grace period). Resolves
 * when the command exits; rejects only when it could not start.
 */
export function runCommand(
  config: Pick<ExecTaskConfig, 'command' | 'cwd' | 'maxOutputBytes'>,
  stdin: Buffer,
  env: NodeJS.ProcessEnv,
  signal: AbortSignal,
): Promise<ExecResult> {
  const maxOutputBytes = config.maxOutputBytes ?? DEFAULT_EXEC_MAX_OUTPUT_BYTES;
  const [program, ...args] = config.command;
  return new Promise<ExecResult>((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    // detached: the child leads a new process group, so kill(-pid) reaches its children too.
    const child = spawn(program!, args, { cwd: config.cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'], shell: false });
    const stdout = new BoundedTail(maxOutputBytes);
    const stderr = new BoundedTail(maxOutputBytes);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    // A command that never reads stdin closes it early: EPIPE is not a failure.
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin);

    let killTimer: NodeJS.Timeout | undefined;
    const killGroup = (sig: NodeJS.Signals) => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, sig);
      } catch {
        // The group is already gone.
      }
    };
    const onAbort = () => {
      killGroup('SIGTERM');
      killTimer = setTimeout(() => killGroup('SIGKILL'), EXEC_KILL_GRACE_MS);
      killTimer.unref();
    };
    signal.addEventListener('abort', onAbort, { once: true });

    let settled = false;
    const finish = (exitCode: number | null, exitSignal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      // After an abort, make sure nothing of the group survives its leader.
      if (signal.aborted) killGroup('SIGKILL');
      resolve({
        exitCode,
        signal: exitSignal,
        stdout: stdout.text(),
        stderr: stderr.text(),
        isOutputTruncated: stdout.isTruncated || stderr.isTruncated,
      });
    };
    child.on('error', (error) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      reject(new Error(`could not start ${program}: ${error.message}`, { cause: error }));
    });
    child.on('close', (code, sig) => finish(code, sig));
    child.on('exit', (code, sig) => {
      // A background grandchild can hold the pipes open past the leader's exit: do not wait forever.
      setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
        finish(code, sig);
      }, 1_000).unref();
    });
  });
}

/** Keeps the last `limitBytes` bytes pushed into it. */
class BoundedTail {
  private chunks: Buffer[] = [];
  private bytes = 0;
  isTruncated = false;

  constructor(private readonly limitBytes: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.bytes += chunk.length;
    while (this.bytes > this.limitBytes && this.chunks.length > 0) {
      const excess = this.bytes - this.limitBytes;
      const first = this.chunks[0]!;
      this.isTruncated = true;
      if (first.length <= excess) {
        this.chunks.shift();
        this.bytes -= first.length;
      } else {
        this.chunks[0] = first.subarray(excess);
        this.bytes -= excess;
      }
    }
  }

  text(): string {
    return Buffer.concat(this.chunks).toString('utf8');
  }
}

function tail(text: string, chars: number): string {
  return text.length > chars ? `…${text.slice(-chars)}` : text;
}
