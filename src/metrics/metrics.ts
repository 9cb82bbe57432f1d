// Every metric Mailroom exports, with its name, help and labels, in one place (prom-client,
// a private Registry per MailroomMetrics so two instances or an app's own metrics never
// collide). The ingress server calls observeIngress() and serves render() at /metrics;
// workers are attached for job metrics.
//
// Where the numbers come from, and why:
// - Counts by queue and status, the dead count and the oldest pending age come from
//   `mr.stats()`, cached for `statsCacheMs` (default 5 s) and refreshed at most once per
//   window however many scrapers there are. stats() reads counters kept in the same
//   transactions as the jobs (never COUNT(*) over the table), so a scrape is cheap at
//   any table size.
// - The store keeps no per-type counters, and counting by type would be a COUNT(*) per
//   scrape. So by-type numbers are counters of what attached workers did
//   (`mailroom_job_attempts_total{queue,type,outcome}`, the duration histogram): rates
//   per type, summed across processes by Prometheus. Backlog by type is a CLI question
//   (`mailroom jobs --status pending --type T`), not a metric.
// - On a store with `capabilities.databaseHealth` (PostgreSQL), the oldest open transaction
//   holding back vacuum and the dead rows of Mailroom's tables come from the server's
//   statistics views (`store.databaseHealth()`), refreshed with the stats snapshot; on
//   other stores these series do not exist. Their failure never fails a scrape: the
//   series go absent (a stale age would page for a transaction long gone).
// - Ingress counts come from the server (observeIngress); the bytes of bodies it holds are
//   read from its body budget at each scrape (observeIngressBodyBytes).
// Lint (`promtool check metrics`): counters end in `_total`, no gauge does, units are
// base units in the name (`_seconds`).

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ClaimedJob } from '../core/types.js';
import { hasCode } from '../core/errors.js';
import { JOB_STATUSES } from '../core/types.js';
import type { Mailroom, MailroomStats } from '../mailroom.js';
import type { Worker } from '../worker/worker.js';

export interface MetricsOptions {
  /** How long a stats() snapshot is reused between scrapes. @default 5000 */
  readonly statsCacheMs?: number;
  /**
   * How many endpoints (those with the largest backlog) get a series of their own in
   * `mailroom_endpoint_backlog`; the rest are only in the totals. 0 names none. @default 10
   */
  readonly endpointTopN?: number;
  /** Also export Node.js process metrics (CPU, memory, event loop) prefixed `mailroom_`. @default true */
  readonly processMetrics?: boolean;
}

/** 10 endpoints by name: enough to see who is behind, never one series per customer. */
export const DEFAULT_ENDPOINT_TOP_N = 10;

/** 5 s: Prometheus scrapes every 15–60 s; several scrapers (HA pairs) share one snapshot. */
export const DEFAULT_STATS_CACHE_MS = 5_000;

/**
 * Handler duration buckets, seconds: webhook forwards take milliseconds, exec deploys and
 * reports take minutes (the default timeout is 5 minutes).
 */
const DURATION_BUCKETS_SECONDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];

/** How an attempt ended, as the metrics label it. */
export type AttemptMetricOutcome = 'done' | 'failed' | 'timeout' | 'dead' | 'lost' | 'handed_back' | 'snoozed';

export class MailroomMetrics {
  /** The private registry; `render()` serialises it. */
  readonly registry = new Registry();

  private readonly statsCacheMs: number;
  private snapshot: MailroomStats | null = null;
  private snapshotAtMs = 0;
  private refreshing: Promise<void> | null = null;
  private readonly workers = new Map<Worker, () => void>();
  /** Start time (ms) of each job an attached worker is running, for durations. */
  private readonly startedAtMs = new Map<string, number>();
  /** Jobs claimed but not finished, for events that carry only ids (handedBack). */
  private readonly claimed = new Map<string, { queue: string; type: string }>();

  private readonly jobs: Gauge<'queue' | 'status'>;
  private readonly deadJobs: Gauge;
  private readonly oldestPendingAge: Gauge<'queue'>;
  private readonly queuePaused: Gauge<'queue'>;
  private readonly storeUp: Gauge;
  private readonly statsAge: Gauge;
  private readonly attempts: Counter<'queue' | 'type' | 'outcome'>;
  private readonly duration: Histogram<'queue' | 'type' | 'outcome'>;
  private readonly runningJobs: Gauge;
  private readonly ingress: Counter<'source' | 'code'>;
  private readonly endpoints: Gauge<'state'>;
  private readonly breakers: Gauge<'state'>;
  private readonly outgoingBacklog: Gauge;
  private readonly endpointBacklog: Gauge<'endpoint'>;
  private readonly endpointsDisabled: Counter<'cause'>;
  private readonly endpointTopN: number;
  /** Present only when the store has capabilities.databaseHealth. */
  private readonly databaseHealth: { oldestTransactionAge: Gauge; deadTuples: Gauge<'table'> } | null;

  constructor(
    readonly mr: Mailroom,
    readonly options: MetricsOptions = {},
  ) {
    this.statsCacheMs = Math.max(0, options.statsCacheMs ?? DEFAULT_STATS_CACHE_MS);
    const registers = [this.registry];
    this.jobs = new Gauge({
      name: 'mailroom_jobs',
      help: 'Jobs by queue and status (from a cached stats snapshot).',
      labelNames: ['queue', 'status'],
      registers,
    });
    this.deadJobs = new Gauge({
      name: 'mailroom_dead_jobs',
      help: 'Dead jobs across all queues, waiting for a replay or a purge (alert when it grows).',
      registers,
    });
    this.oldestPendingAge = new Gauge({
      name: 'mailroom_oldest_pending_age_seconds',
      help: 'How long the oldest due pending job of each queue has waited; 0 when none is due.',
      labelNames: ['queue'],
      registers,
    });
    this.queuePaused = new Gauge({
      name: 'mailroom_queue_paused',
      help: '1 for each paused queue (mr.pauseQueue, mailroom queue pause): nothing claims its jobs until it is resumed.',
      labelNames: ['queue'],
      registers,
    });
    this.storeUp = new Gauge({
      name: 'mailroom_store_up',
      help: '1 when the last stats refresh reached the store, 0 when it failed (the job gauges then hold the last good values).',
      registers,
    });
    this.statsAge = new Gauge({
      name: 'mailroom_stats_age_seconds',
      help: 'Age of the stats snapshot the job gauges come from.',
      registers,
    });
    this.attempts = new Counter({
      name: 'mailroom_job_attempts_total',
      help: 'Job attempts finished by workers in this process, by outcome (done, failed = will retry, timeout = will retry, dead, lost, handed_back).',
      labelNames: ['queue', 'type', 'outcome'],
      registers,
    });
    this.duration = new Histogram({
      name: 'mailroom_job_duration_seconds',
      help: 'Handler run time per attempt, by outcome.',
      labelNames: ['queue', 'type', 'outcome'],
      buckets: DURATION_BUCKETS_SECONDS,
      registers,
    });
    this.runningJobs = new Gauge({
      name: 'mailroom_worker_running_jobs',
      help: 'Handlers running now in the workers attached in this process.',
      registers,
      collect: () => {
        let running = 0;
        for (const worker of this.workers.keys()) running += worker.activeCount;
        this.runningJobs.set(running);
      },
    });
    this.ingress = new Counter({
      name: 'mailroom_ingress_requests_total',
      help: 'Webhook requests answered, by source and HTTP status code.',
      labelNames: ['source', 'code'],
      registers,
    });
    this.endpointTopN = Math.max(0, Math.floor(options.endpointTopN ?? DEFAULT_ENDPOINT_TOP_N));
    this.endpoints = new Gauge({
      name: 'mailroom_endpoints',
      help: 'Outgoing webhook endpoints by state (enabled, disabled).',
      labelNames: ['state'],
      registers,
    });
    this.breakers = new Gauge({
      name: 'mailroom_endpoint_breakers',
      help: 'Outgoing webhook endpoints by circuit breaker state (closed, open, half_open).',
      labelNames: ['state'],
      registers,
    });
    this.outgoingBacklog = new Gauge({
      name: 'mailroom_outgoing_backlog',
      help: 'Outgoing deliveries waiting to be sent or retried, across every endpoint.',
      registers,
    });
    this.endpointBacklog = new Gauge({
      name: 'mailroom_endpoint_backlog',
      help: 'Outgoing deliveries waiting, for the endpoints most behind only (endpointTopN; the rest are in mailroom_outgoing_backlog).',
      labelNames: ['endpoint'],
      registers,
    });
    this.endpointsDisabled = new Counter({
      name: 'mailroom_endpoints_auto_disabled_total',
      help: 'Endpoints disabled by deliveries in this process: cause gone (answered 410) or failing (no success for endpoints.disableAfterMs).',
      labelNames: ['cause'],
      registers,
    });
    mr.outgoingEvents.on('endpointDisabled', (_endpointId, cause) => this.endpointsDisabled.inc({ cause }));
    this.databaseHealth = mr.store.capabilities.databaseHealth
      ? {
          oldestTransactionAge: new Gauge({
            name: 'mailroom_pg_oldest_transaction_age_seconds',
            help: "Age of the oldest open transaction in Mailroom's PostgreSQL database that holds back vacuum (a written row or a held snapshot; prepared transactions too); 0 when none. Sessions of other roles count only with pg_read_all_stats.",
            registers,
          }),
          deadTuples: new Gauge({
            name: 'mailroom_pg_dead_tuples',
            help: "Dead row versions vacuum has not reclaimed yet, per Mailroom table (pg_stat_user_tables.n_dead_tup).",
            labelNames: ['table'],
            registers,
          }),
        }
      : null;
    if (options.processMetrics !== false) {
      collectDefaultMetrics({ register: this.registry, prefix: 'mailroom_' });
      // prom-client's defaults include gauges named *_total (nodejs_active_handles_total…),
      // which `promtool check metrics` rejects; their per-type siblings carry the same data.
      for (const metric of this.registry.getMetricsAsArray()) {
        const name = (metric as { name?: string }).name ?? '';
        if (name.endsWith('_total') && !(metric instanceof Counter)) this.registry.removeSingleMetric(name);
      }
    }
  }

  /** Export the bytes of webhook bodies the ingress holds now, read through `read` at each scrape. */
  observeIngressBodyBytes(read: () => number): void {
    this.registry.removeSingleMetric('mailroom_ingress_body_bytes');
    new Gauge({
      name: 'mailroom_ingress_body_bytes',
      help: 'Bytes of webhook request bodies held in memory now, against server.bodyBufferLimitBytes (past it: 503).',
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /** Count one ingress answer. */
  observeIngress(source: string, statusCode: number): void {
    this.ingress.inc({ source, code: String(statusCode) });
  }

  /**
   * Record attempts and durations from a worker's events. Returns a function that stops
   * listening (also done automatically when the worker stops).
   */
  attachWorker(worker: Worker): () => void {
    const existing = this.workers.get(worker);
    if (existing) return existing;
    const onClaimed = (jobs: ClaimedJob[]) => {
      for (const job of jobs) this.claimed.set(job.id, { queue: job.queue, type: job.type });
    };
    const onStarted = (job: ClaimedJob) => {
      this.startedAtMs.set(job.id, performance.now());
    };
    const onCompleted = (job: ClaimedJob) => this.finish(job, 'done');
    const onFailed = (job: ClaimedJob, error: unknown) => this.finish(job, hasCode(error, 'MR_ERR_TIMEOUT') ? 'timeout' : 'failed');
    const onDead = (job: ClaimedJob) => this.finish(job, 'dead');
    const onLeaseLost = (job: ClaimedJob) => this.finish(job, 'lost');
    const onSnoozed = (job: ClaimedJob) => this.finish(job, 'snoozed');
    const onHandedBack = (ids: string[]) => {
      for (const id of ids) {
        const labels = this.claimed.get(id);
        if (labels) this.finish({ id, ...labels }, 'handed_back');
      }
    };
    const detach = () => {
      worker.off('claimed', onClaimed);
      worker.off('started', onStarted);
      worker.off('completed', onCompleted);
      worker.off('failed', onFailed);
      worker.off('dead', onDead);
      worker.off('leaseLost', onLeaseLost);
      worker.off('snoozed', onSnoozed);
      worker.off('handedBack', onHandedBack);
      worker.off('stopped', detach);
      this.workers.delete(worker);
    };
    worker.on('claimed', onClaimed);
    worker.on('started', onStarted);
    worker.on('completed', onCompleted);
    worker.on('failed', onFailed);
    worker.on('dead', onDead);
    worker.on('leaseLost', onLeaseLost);
    worker.on('snoozed', onSnoozed);
    worker.on('handedBack', onHandedBack);
    worker.once('stopped', detach);
    this.workers.set(worker, detach);
    return detach;
  }

  /** Prometheus text exposition (format 0.0.4). */
  async render(): Promise<{ contentType: string; body: string }> {
    await this.refreshStats();
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }

  /** Clear the stats cache: the next render() reads the store again (tests, after a purge). */
  invalidate(): void {
    this.snapshotAtMs = 0;
  }

  private finish(job: { id: string; queue: string; type: string }, outcome: AttemptMetricOutcome): void {
    const labels = { queue: job.queue, type: job.type, outcome };
    this.attempts.inc(labels);
    const startedAt = this.startedAtMs.get(job.id);
    // Handed-back jobs that never started have no run time to observe.
    if (startedAt !== undefined) this.duration.observe(labels, (performance.now() - startedAt) / 1_000);
    this.startedAtMs.delete(job.id);
    // A failed job may be claimed again by this worker; its next claim re-adds it.
    this.claimed.delete(job.id);
  }

  private async refreshStats(): Promise<void> {
    if (this.snapshot !== null && Date.now() - this.snapshotAtMs < this.statsCacheMs) {
      this.statsAge.set((Date.now() - this.snapshotAtMs) / 1_000);
      return;
    }
    // One refresh at a time: concurrent scrapes share it.
    this.refreshing ??= Promise.all([this.refreshJobStats(), this.refreshDatabaseHealth(), this.refreshEndpointStats()])
      .then(() => undefined)
      .finally(() => {
        this.refreshing = null;
      });
    await this.refreshing;
    this.statsAge.set(this.snapshot === null ? 0 : (Date.now() - this.snapshotAtMs) / 1_000);
  }

  private async refreshJobStats(): Promise<void> {
    try {
      const stats = await this.mr.stats();
      this.snapshot = stats;
      this.snapshotAtMs = Date.now();
      this.storeUp.set(1);
      this.applySnapshot(stats);
    } catch (error) {
      this.storeUp.set(0);
      // Keep serving the last good numbers; say so through mailroom_store_up.
      this.mr.log.warn({ err: error }, 'metrics: stats refresh failed');
      // Without a snapshot the gauges would be empty; try again on the next scrape.
      if (this.snapshot !== null) this.snapshotAtMs = Date.now();
    }
  }

  private async refreshDatabaseHealth(): Promise<void> {
    const gauges = this.databaseHealth;
    if (gauges === null || !this.mr.store.databaseHealth) return;
    try {
      const health = await this.mr.store.databaseHealth({});
      gauges.oldestTransactionAge.set(health.oldestTransactionAgeMs / 1_000);
      gauges.deadTuples.reset();
      for (const [table, count] of Object.entries(health.deadTuplesByTable)) gauges.deadTuples.set({ table }, count);
    } catch (error) {
      gauges.oldestTransactionAge.reset();
      gauges.deadTuples.reset();
      this.mr.log.warn({ err: error }, 'metrics: database health refresh failed');
    }
  }

  private async refreshEndpointStats(): Promise<void> {
    try {
      const stats = await this.mr.store.endpointStats({ topN: this.endpointTopN });
      this.endpoints.set({ state: 'enabled' }, stats.enabled);
      this.endpoints.set({ state: 'disabled' }, stats.disabled);
      for (const [state, n] of Object.entries(stats.breakers)) this.breakers.set({ state }, n);
      this.outgoingBacklog.set(stats.backlog);
      // Reset first: an endpoint that left the top N must not linger.
      this.endpointBacklog.reset();
      for (const { endpointId, backlog } of stats.topBacklog) this.endpointBacklog.set({ endpoint: endpointId }, backlog);
    } catch (error) {
      this.endpointBacklog.reset();
      this.mr.log.warn({ err: error }, 'metrics: endpoint stats refresh failed');
    }
  }

  private applySnapshot(stats: MailroomStats): void {
    // Reset first: a queue that vanished (all its jobs purged) must not linger.
    this.jobs.reset();
    this.oldestPendingAge.reset();
    for (const [queue, counts] of Object.entries(stats.byQueue)) {
      for (const status of JOB_STATUSES) this.jobs.set({ queue, status }, counts[status]);
      this.oldestPendingAge.set({ queue }, (stats.oldestPendingAgeMsByQueue[queue] ?? 0) / 1_000);
    }
    this.deadJobs.set(stats.byStatus.dead);
    // Only paused queues have a series: a resumed one disappears, as a purged queue does.
    this.queuePaused.reset();
    for (const { queue } of stats.paused) this.queuePaused.set({ queue }, 1);
  }
}
