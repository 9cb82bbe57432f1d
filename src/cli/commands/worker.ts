// `mailroom worker`: parses its flags, opens Mailroom from the config and hands it to
// server/worker-process.ts, which runs the tasks until SIGTERM/SIGINT and then stops
// gracefully (no new claims, --shutdown-timeout for running handlers, the rest back
// uncharged); exit 0. Retention runs too unless --retention off.

import { CliUsageError, parseCommandArgs, parseDurationMs, parseInteger, parseList } from '../args.js';
import type { CommonOptions } from '../args.js';
import { printableStoreUrl } from '../../store/store-url.js';
import { openCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { workerOptions } from '../worker-options.js';
import { startWorkerProcess } from '../../server/worker-process.js';
import { warnAboutUnhandledTasks, warnAboutUnknownQueuesOf } from '../../server/unhandled-tasks.js';

export interface WorkerCliOptions {
  readonly common: CommonOptions;
  readonly queues?: string[];
  readonly concurrency?: number;
  readonly prefetch?: number;
  readonly pollMs?: number;
  readonly leaseMs?: number;
  readonly shutdownTimeoutMs: number;
  /** null: retention off; undefined: the config's window, else 7 days. */
  readonly retentionMs?: number | null;
}

/** 10 s: under Kubernetes' default 30 s grace period, with room for the hand-back writes. */
const DEFAULT_SHUTDOWN_TIMEOUT_MS = 10_000;

const worker: CliCommand<WorkerCliOptions> = {
  name: 'worker',
  summary: 'Run the configured tasks until SIGTERM/SIGINT',
  usage: `Usage: mailroom worker [--queues a,b] [--concurrency N] [options]

Runs the tasks in the config file (mailroom.config.js/.mjs, or --config PATH). On SIGTERM
or SIGINT it stops claiming, gives running handlers --shutdown-timeout to finish, hands
the rest back without charging an attempt, and exits 0. A second signal hands back what
is still running too, uncharged, at once, and exits 130; a third exits without waiting.
Logs are JSON lines on stdout (pretty on a terminal).

Options:
  --queues a,b               queues to work (default: the config's worker.queues, else all)
  --all-queues               every queue, whatever the config's worker.queues says
  --concurrency N            handlers at once (default 20)
  --prefetch N               jobs claimed ahead of free slots (default: adapts to the
                             completion rate, 4 to 250 per slot and 500 at most;
                             see docs/operating.md)
  --poll DURATION            longest idle wait between claims (default 500ms)
  --lease DURATION           job lease, extended while a handler runs (default 60s)
  --shutdown-timeout DURATION  deadline for running handlers on stop (default 10s)
  --retention DURATION|off   purge done jobs older than this (default: config
                             retention.doneMs, else 7d); "off" to leave it to another process
  --db URL, --config PATH
  --json                     JSON log lines even on a terminal`,

  parse(argv) {
    const { values, common } = parseCommandArgs('worker', argv, {
      queues: { type: 'string' },
      'all-queues': { type: 'boolean' },
      concurrency: { type: 'string' },
      prefetch: { type: 'string' },
      poll: { type: 'string' },
      lease: { type: 'string' },
      'shutdown-timeout': { type: 'string' },
      retention: { type: 'string' },
    });
    const leaseMs = values.lease === undefined ? undefined : parseDurationMs(values.lease, '--lease');
    if (leaseMs !== undefined && leaseMs < 1_000) throw new CliUsageError('--lease must be at least 1s.');
    const pollMs = values.poll === undefined ? undefined : parseDurationMs(values.poll, '--poll');
    if (pollMs !== undefined && pollMs < 1) throw new CliUsageError('--poll must be at least 1ms.');
    let retentionMs: number | null | undefined;
    if (values.retention !== undefined) {
      retentionMs = /^(off|none|0)$/i.test(values.retention) ? null : parseDurationMs(values.retention, '--retention');
      if (retentionMs === 0) retentionMs = null;
    }
    if (values['all-queues'] && values.queues !== undefined) throw new CliUsageError('Give --queues or --all-queues, not both.');
    return {
      common,
      // An empty list is "every queue" to the worker, and unlike undefined it is not
      // replaced by the config file's worker.queues.
      queues: values['all-queues'] ? [] : values.queues === undefined ? undefined : parseList(values.queues, '--queues', 'default,email'),
      concurrency: values.concurrency === undefined ? undefined : parseInteger(values.concurrency, '--concurrency', { min: 1, max: 10_000 }),
      prefetch: values.prefetch === undefined ? undefined : parseInteger(values.prefetch, '--prefetch', { min: 0, max: 100_000 }),
      pollMs,
      leaseMs,
      shutdownTimeoutMs: values['shutdown-timeout'] === undefined ? DEFAULT_SHUTDOWN_TIMEOUT_MS : parseDurationMs(values['shutdown-timeout'], '--shutdown-timeout'),
      retentionMs,
    };
  },

  async run(options, io) {
    const { mr, config, log, db } = await openCliMailroom(options.common, io, {
      // Started with the worker; --retention wins over the config's window.
      retention: options.retentionMs === null ? false : { doneMs: options.retentionMs },
      logLevel: 'info',
      logTo: 'stdout',
      prettyLogs: options.common.json ? false : undefined,
    });
    try {
      const { worker: workerHandle, stopOn } = startWorkerProcess({ mr, log, worker: workerOptions(config?.worker, options) });
      const retentionMs = options.retentionMs === undefined ? config?.retention?.doneMs : options.retentionMs;
      log.info(
        {
          workerId: workerHandle.id,
          store: printableStoreUrl(db),
          queues: workerHandle.queues ?? 'all',
          concurrency: workerHandle.concurrency,
          prefetch: workerHandle.isPrefetchAdaptive ? 'adaptive' : workerHandle.prefetch,
          types: mr.taskTypes(),
          // The built-in deliver task is not among the configured types; say whether it runs.
          delivers: mr.isDelivering,
          retentionMs: retentionMs === null ? 'off' : (retentionMs ?? 'default'),
        },
        'worker started',
      );
      warnAboutUnhandledTasks(config, mr.taskTypes(), log);
      await warnAboutUnknownQueuesOf(mr, workerHandle.queues, log);
      await stopOn(io.stopSignal, { timeoutMs: options.shutdownTimeoutMs, stopNowSignal: io.stopNowSignal });
      return 0;
    } finally {
      await mr.close({ timeoutMs: options.shutdownTimeoutMs });
    }
  },
};

export default worker;
