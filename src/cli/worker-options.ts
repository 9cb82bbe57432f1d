// How `serve` and `worker` settle the options of the worker they start: a flag wins over
// the config file's `worker` block, which wins over the library's defaults (left unset).

import type { WorkerConfig } from '../config/define-config.js';
import type { WorkerOptions } from '../worker/worker.js';

export function workerOptions(config: WorkerConfig | undefined, flags: WorkerOptions = {}): WorkerOptions {
  return {
    queues: flags.queues ?? config?.queues,
    concurrency: flags.concurrency ?? config?.concurrency,
    prefetch: flags.prefetch ?? config?.prefetch,
    pollMs: flags.pollMs ?? config?.pollMs,
    leaseMs: flags.leaseMs ?? config?.leaseMs,
  };
}
