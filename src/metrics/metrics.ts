// Every metric Mailroom exports, with its name, help and labels, in one place (prom-client).
// PLACEHOLDER API (filled in by the operator-surface work): the ingress server calls
// observeIngress() and serves render() at /metrics; workers are attached for job metrics.

import type { Mailroom } from '../mailroom.js';
import type { Worker } from '../worker/worker.js';

export interface MetricsOptions {
  /** How long a stats() snapshot is reused between scrapes. @default 5000 */
  readonly statsCacheMs?: number;
}

export class MailroomMetrics {
  constructor(
    readonly mr: Mailroom,
    readonly options: MetricsOptions = {},
  ) {}

  /** Count one ingress answer. */
  observeIngress(_source: string, _statusCode: number): void {}

  /** Record attempts and durations from a worker's events. */
  attachWorker(_worker: Worker): void {}

  /** Prometheus text exposition. */
  async render(): Promise<{ contentType: string; body: string }> {
    return { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: '' };
  }
}
