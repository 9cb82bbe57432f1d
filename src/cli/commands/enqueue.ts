// `mailroom enqueue TYPE --payload JSON`: add one job. Opens with the config so the job
// gets the configured task's queue and attempt budget, as if enqueued in code.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LimitKeyUnknownError, MailroomError } from '../../core/errors.js';
import { CliUsageError, parseCommandArgs, parseDurationMs, parseInteger, parseIsoDate } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { formatTime, jobToJson, writeJson, writeLines } from '../output.js';

export interface EnqueueCliOptions {
  readonly common: CommonOptions;
  readonly type: string;
  readonly payload: unknown;
  readonly key?: string;
  readonly group?: string;
  readonly priority?: number;
  readonly queue?: string;
  readonly delayMs?: number;
  readonly runAt?: Date;
  readonly maxAttempts?: number;
}

const enqueue: CliCommand<EnqueueCliOptions> = {
  name: 'enqueue',
  summary: 'Add a job',
  usage: `Usage: mailroom enqueue TYPE [--payload JSON] [options]

Adds one job of TYPE. Policies (queue, max attempts) come from the configured task unless
given here. Enqueueing an existing --key returns that job; the same key with a different
payload is refused.

Options:
  --payload JSON       the job's payload (default {}); @file.json reads a file
  --key K              idempotency key
  --group G            ordering group: jobs of one group run one at a time, in order
  --priority N         higher runs first within a queue (default 0)
  --queue Q            queue (default: the task's, else "default")
  --delay DURATION     run no earlier than this from now: 250ms, 30s, 5m, 2h, 7d
  --run-at ISO         run no earlier than this time (2030-01-01T09:00:00Z)
  --max-attempts N     attempt budget (default: the task's, else 5)
  --db URL, --config PATH, --json

Example:
  mailroom enqueue send_email --payload '{"userId":42}' --key welcome:42 --delay 5m`,

  parse(argv, io) {
    const { values, positionals, common } = parseCommandArgs(
      'enqueue',
      argv,
      {
        payload: { type: 'string' },
        key: { type: 'string' },
        group: { type: 'string' },
        priority: { type: 'string' },
        queue: { type: 'string' },
        delay: { type: 'string' },
        'run-at': { type: 'string' },
        'max-attempts': { type: 'string' },
      },
      { maxPositionals: 1 },
    );
    const type = positionals[0];
    if (!type) throw new CliUsageError('Give the job type: mailroom enqueue TYPE --payload JSON.');
    if (values.delay !== undefined && values['run-at'] !== undefined) throw new CliUsageError('Give --delay or --run-at, not both.');
    for (const flag of ['key', 'group', 'queue'] as const) {
      if (values[flag] !== undefined && values[flag]!.trim() === '') throw new CliUsageError(`--${flag} must not be empty.`);
    }
    return {
      common,
      type,
      payload: parsePayload(values.payload, io.cwd),
      key: values.key,
      group: values.group,
      queue: values.queue,
      priority: values.priority === undefined ? undefined : parseInteger(values.priority, '--priority', { min: -1_000_000, max: 1_000_000 }),
      delayMs: values.delay === undefined ? undefined : parseDurationMs(values.delay, '--delay'),
      runAt: values['run-at'] === undefined ? undefined : parseIsoDate(values['run-at'], '--run-at'),
      maxAttempts: values['max-attempts'] === undefined ? undefined : parseInteger(values['max-attempts'], '--max-attempts', { min: 1, max: 1_000 }),
    };
  },

  async run(options, io) {
    // Into a store that exists: run from the wrong folder or with a mistyped --db, creating
    // a fresh database would take the job somewhere no worker ever looks.
    // The task's policy (queue, attempts) applies as in code, so its module is loaded.
    return withCliMailroom(options.common, io, { migrate: false, registerTasks: true }, async ({ mr }) => {
      const job = await mr
        .enqueue(options.type, options.payload as never, {
          key: options.key,
          group: options.group,
          priority: options.priority,
          queue: options.queue,
          delayMs: options.delayMs,
          runAt: options.runAt,
          maxAttempts: options.maxAttempts,
        })
        .catch((error: unknown) => {
          // The library's advice (mr.task) means nothing here: the CLI registers tasks from a config.
          if (!(error instanceof LimitKeyUnknownError)) throw error;
          throw new MailroomError(
            error.code,
            `Task "${options.type}" has per-key limits (a worker recorded them), so its job needs a limit key computed by the task's definition: pass --config with the config that defines the task.`,
            { cause: error },
          );
        });
      if (options.common.json) writeJson(io.stdout, jobToJson(job));
      else if (job.status !== 'pending' && job.status !== 'running') {
        // A new job is always pending: this is the key's earlier job, returned as it is.
        const again = job.status === 'dead' ? ` mailroom replay --id ${job.id} runs it again.` : '';
        writeLines(io.stdout, `Key ${options.key} already belongs to job ${job.id} (${job.type}), which is ${job.status}; nothing enqueued.${again}`);
      } else writeLines(io.stdout, `Job ${job.id} (${job.type}) is ${job.status} on queue ${job.queue}, runs at ${formatTime(job.runAt)}.`);
      return 0;
    });
  },
};

function parsePayload(text: string | undefined, cwd: string): unknown {
  if (text === undefined) return {};
  let source = text;
  if (text.startsWith('@')) {
    const file = resolve(cwd, text.slice(1));
    try {
      source = readFileSync(file, 'utf8');
    } catch (error) {
      throw new CliUsageError(`--payload ${text}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}).`);
    }
  }
  try {
    return JSON.parse(source);
  } catch (error) {
    throw new CliUsageError(`--payload is not valid JSON (${(error as Error).message}); quote it: --payload '{"userId":42}'.`);
  }
}

export default enqueue;
