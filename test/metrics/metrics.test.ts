// /metrics content on every store: job gauges from a cached stats() snapshot, attempt and
// duration series from worker events, ingress counts, and the whole exposition checked by
// Prometheus's own parser and linter (`promtool check metrics`).

import { spawnSync } from 'node:child_process';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MailroomMetrics } from '../../src/metrics/metrics.js';
import { Permanent } from '../../src/core/errors.js';
import { insertJob } from '../harness/factory.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitForEvent } from '../harness/wait.js';
import { storeHarnesses } from '../harness/stores.js';
import { hasPromtool, promtoolCheck, sample } from '../harness/prometheus.js';

const IS_CI = process.env.CI === 'true';
if (!hasPromtool) {
  const line = 'promtool not found (apt-get install prometheus): the Prometheus exposition lint test is';
  if (IS_CI) console.error(`${line} FAILING (CI=true)`);
  else console.warn(`${line} SKIPPED`);
}


describe.each(storeHarnesses)('metrics on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.runIf(harness.isAvailable)('exports jobs by queue and status, the dead count and the oldest pending age', async () => {
    const { mr } = await openTestMailroom(harness);
    await insertJob(mr.store, { queue: 'email', now: new Date(Date.now() - 90_000) });
    await insertJob(mr.store, { queue: 'email', status: 'dead' });
    await insertJob(mr.store, { queue: 'email', status: 'dead' });
    await insertJob(mr.store, { queue: 'reports', status: 'done' });
    const { body, contentType } = await new MailroomMetrics(mr, { processMetrics: false }).render();
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(sample(body, 'mailroom_jobs{queue="email",status="pending"}')).toBe(1);
    expect(sample(body, 'mailroom_jobs{queue="email",status="dead"}')).toBe(2);
    expect(sample(body, 'mailroom_jobs{queue="reports",status="done"}')).toBe(1);
    expect(sample(body, 'mailroom_jobs{queue="reports",status="running"}')).toBe(0);
    expect(sample(body, 'mailroom_dead_jobs')).toBe(2);
    expect(sample(body, 'mailroom_oldest_pending_age_seconds{queue="email"}')).toBeGreaterThanOrEqual(85);
    expect(sample(body, 'mailroom_oldest_pending_age_seconds{queue="reports"}')).toBe(0);
    expect(sample(body, 'mailroom_store_up')).toBe(1);
  });

  it.runIf(harness.isAvailable)('exports 1 for each paused queue, and no series once it is resumed', async () => {
    const { mr } = await openTestMailroom(harness);
    await mr.pauseQueue('email', { reason: 'provider outage' });
    const metrics = new MailroomMetrics(mr, { processMetrics: false });
    expect(sample((await metrics.render()).body, 'mailroom_queue_paused{queue="email"}')).toBe(1);
    await mr.resumeQueue('email');
    metrics.invalidate();
    expect((await metrics.render()).body).not.toContain('mailroom_queue_paused{');
  });

  it.runIf(harness.isAvailable)('reads stats once per cache window however often it is scraped', async () => {
    const { mr } = await openTestMailroom(harness);
    const stats = vi.spyOn(mr, 'stats');
    const metrics = new MailroomMetrics(mr, { statsCacheMs: 60_000, processMetrics: false });
    await Promise.all([metrics.render(), metrics.render(), metrics.render()]);
    await metrics.render();
    expect(stats).toHaveBeenCalledTimes(1);
    // A job enqueued now shows up once the snapshot is refreshed, not before.
    await mr.enqueue('late', {});
    expect(sample((await metrics.render()).body, 'mailroom_jobs{queue="default",status="pending"}')).toBeUndefined();
    metrics.invalidate();
    expect(sample((await metrics.render()).body, 'mailroom_jobs{queue="default",status="pending"}')).toBe(1);
    expect(stats).toHaveBeenCalledTimes(2);
  });

  it.runIf(harness.isAvailable)(
    `exports the vacuum-horizon and dead-row gauges only where the store reports them (databaseHealth: ${harness.capabilities.databaseHealth})`,
    async () => {
      const { mr } = await openTestMailroom(harness);
      const { body } = await new MailroomMetrics(mr, { processMetrics: false }).render();
      const series = ['mailroom_pg_oldest_transaction_age_seconds', 'mailroom_pg_dead_tuples{table="mailroom_job"}'];
      for (const name of series) {
        if (harness.capabilities.databaseHealth) expect(sample(body, name), name).toBeGreaterThanOrEqual(0);
        else expect(body, name).not.toContain(name.replace(/\{.*/, ''));
      }
      // The rest of the exposition passes the same lint on every store.
      if (hasPromtool) {
        expect(promtoolCheck(body)).toEqual({ status: 0, stdout: '', stderr: '' });
      }
    },
  );

  it.runIf(harness.isAvailable)('counts attempts by type and outcome and observes handler durations from worker events', async () => {
    const { mr } = await openTestMailroom(harness);
    let calls = 0;
    mr.task('flaky', { maxAttempts: 3, backoff: { baseMs: 1, capMs: 1, jitter: 'none' }, async run() {
      calls++;
      if (calls === 1) throw new Error('transient');
    } });
    mr.task('doomed', { async run() {
      throw new Permanent('no such order');
    } });
    const metrics = new MailroomMetrics(mr, { processMetrics: false });
    await mr.enqueue('flaky', {});
    await mr.enqueue('doomed', {}, { queue: 'orders' });
    const worker = mr.work({ pollMs: 10, queues: ['default', 'orders'] });
    metrics.attachWorker(worker);
    // drained() does not wait for a retry that is not due yet: wait for the second attempt.
    await waitForEvent(worker, 'completed');
    await worker.drained();
    const { body } = await metrics.render();
    expect(sample(body, 'mailroom_job_attempts_total{queue="default",type="flaky",outcome="failed"}')).toBe(1);
    expect(sample(body, 'mailroom_job_attempts_total{queue="default",type="flaky",outcome="done"}')).toBe(1);
    expect(sample(body, 'mailroom_job_attempts_total{queue="orders",type="doomed",outcome="dead"}')).toBe(1);
    expect(sample(body, 'mailroom_job_duration_seconds_count{queue="default",type="flaky",outcome="done"}')).toBe(1);
    expect(sample(body, 'mailroom_job_duration_seconds_count{queue="orders",type="doomed",outcome="dead"}')).toBe(1);
    expect(sample(body, 'mailroom_job_duration_seconds_bucket{le="+Inf",queue="default",type="flaky",outcome="failed"}')).toBe(1);
  });
});

describe('metrics without a store round trip', () => {
  afterEach(async () => closeTestMailrooms(storeHarnesses[0]!));

  it('counts ingress answers by source and status code', async () => {
    const { mr } = await openTestMailroom(storeHarnesses[0]!);
    const metrics = new MailroomMetrics(mr, { processMetrics: false });
    metrics.observeIngress('stripe', 202);
    metrics.observeIngress('stripe', 202);
    metrics.observeIngress('stripe', 401);
    metrics.observeIngress('github', 200);
    const { body } = await metrics.render();
    expect(sample(body, 'mailroom_ingress_requests_total{source="stripe",code="202"}')).toBe(2);
    expect(sample(body, 'mailroom_ingress_requests_total{source="stripe",code="401"}')).toBe(1);
    expect(sample(body, 'mailroom_ingress_requests_total{source="github",code="200"}')).toBe(1);
  });

  it('exports the bytes of webhook bodies the ingress holds now, read at each scrape', async () => {
    const { mr } = await openTestMailroom(storeHarnesses[0]!);
    const metrics = new MailroomMetrics(mr, { processMetrics: false });
    let heldBytes = 4_096;
    metrics.observeIngressBodyBytes(() => heldBytes);
    expect(sample((await metrics.render()).body, 'mailroom_ingress_body_bytes')).toBe(4_096);
    heldBytes = 0;
    expect(sample((await metrics.render()).body, 'mailroom_ingress_body_bytes')).toBe(0);
  });

  it('keeps the last good job numbers and reports mailroom_store_up 0 when stats fail', async () => {
    const { mr } = await openTestMailroom(storeHarnesses[0]!);
    await insertJob(mr.store, { status: 'dead' });
    const metrics = new MailroomMetrics(mr, { processMetrics: false });
    expect(sample((await metrics.render()).body, 'mailroom_dead_jobs')).toBe(1);
    vi.spyOn(mr, 'stats').mockRejectedValue(new Error('database is locked'));
    metrics.invalidate();
    const { body } = await metrics.render();
    expect(sample(body, 'mailroom_store_up')).toBe(0);
    expect(sample(body, 'mailroom_dead_jobs')).toBe(1);
  });

  it('keeps separate registries, so two instances never collide', async () => {
    const { mr } = await openTestMailroom(storeHarnesses[0]!);
    const a = new MailroomMetrics(mr);
    const b = new MailroomMetrics(mr);
    a.observeIngress('stripe', 202);
    expect(sample((await a.render()).body, 'mailroom_ingress_requests_total{source="stripe",code="202"}')).toBe(1);
    expect(sample((await b.render()).body, 'mailroom_ingress_requests_total{source="stripe",code="202"}')).toBeUndefined();
  });

  it.skipIf(!hasPromtool && !IS_CI)('passes `promtool check metrics` (parser and linter) with every series populated', async () => {
    const { mr } = await openTestMailroom(storeHarnesses[0]!);
    mr.task('ok', async () => undefined);
    mr.task('bad', async () => {
      throw new Permanent('nope');
    });
    await insertJob(mr.store, { queue: 'email', now: new Date(Date.now() - 5_000) });
    await mr.enqueue('ok', {});
    await mr.enqueue('bad', {});
    const metrics = new MailroomMetrics(mr);
    const worker = mr.work({ pollMs: 10 });
    metrics.attachWorker(worker);
    await worker.drained();
    metrics.observeIngress('stripe', 202);
    const { body } = await metrics.render();
    for (const name of ['mailroom_jobs', 'mailroom_job_attempts_total', 'mailroom_job_duration_seconds', 'mailroom_ingress_requests_total', 'mailroom_process_cpu_seconds_total']) {
      expect(body).toContain(`# TYPE ${name} `);
    }
    // No gauge may be named *_total (the lint rule; checked here too in case promtool relaxes it).
    const gauges = [...body.matchAll(/^# TYPE (\S+) gauge$/gm)].map((m) => m[1]!);
    expect(gauges.filter((name) => name.endsWith('_total'))).toEqual([]);
    const check = spawnSync('promtool', ['check', 'metrics'], { input: body, encoding: 'utf8' });
    expect(check.error).toBeUndefined();
    expect({ status: check.status, stdout: check.stdout, stderr: check.stderr }).toEqual({ status: 0, stdout: '', stderr: '' });
  });
});
