// PostgreSQL only: the server itself goes away (an immediate stop, which is a crash: no
// checkpoint, WAL replay on start) and comes back while `mailroom serve` takes webhooks,
// a worker process runs jobs and the test enqueues more. Nobody restarts Mailroom: the
// ingress answers 503 while the server is down and 2xx again after; the workers' store
// errors back off and recover; nothing acknowledged is lost; no job stays `running` past
// its lease. It runs its own throwaway cluster (initdb + pg_ctl on a free port) because
// crashing the shared server would break every other suite; without the binaries it skips
// loudly (and fails under CI=true).

import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreUnavailableError } from '../../src/core/errors.js';
import { Mailroom } from '../../src/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { analyseLedger, boundedAgent, cleanupFaults, openRawReader, postSigned, readLedger, startFaultWorker, startServe, tempDir, writeServeConfig } from './kit.js';
import { findPostgresBinOrWarn, startThrowawayCluster } from './pg-cluster.js';
import type { ThrowawayCluster } from './pg-cluster.js';

const IS_CI = process.env.CI === 'true';
const bin = findPostgresBinOrWarn('the PostgreSQL restart fault test');
const LEASE_MS = 2_000;

describe('a PostgreSQL server restart under load', () => {
  let cluster: ThrowawayCluster | null = null;
  let mr: Mailroom | null = null;

  afterEach(async () => {
    cleanupFaults();
    await mr?.close({ timeoutMs: 1_000 }).catch(() => undefined);
    mr = null;
    cluster?.destroy();
    cluster = null;
  });

  it.skipIf(!bin && !IS_CI)(
    'recovers ingress and workers without operator action, loses nothing acknowledged and leaves no job running past its lease',
    async () => {
      if (!bin) throw new Error('initdb/pg_ctl not found: install the PostgreSQL server package');
      cluster = await startThrowawayCluster(bin);
      const db = `${cluster.url}?schema=mr_restart`;
      mr = await Mailroom.open({ db, logger: pino({ level: 'silent' }) });
      const dir = tempDir();
      const ledger = join(dir, 'ledger.txt');
      const serve = await startServe({ db, config: writeServeConfig(dir), ledger, cwd: dir });
      const worker = await startFaultWorker({ db, ledger, concurrency: 20, leaseMs: LEASE_MS });

      // Load: a sender that retries each delivery until it is acknowledged, and an
      // application that enqueues jobs and keeps only those whose enqueue resolved.
      const agent = boundedAgent(20);
      const ackedDeliveries = new Set<string>();
      const ackedJobs = new Set<string>();
      let refusedPosts = 0;
      let refusedEnqueues = 0;
      let restartedAt = 0;
      let ackedAfterRestart = 0;
      let isLoading = true;
      const sender = async (lane: number) => {
        for (let n = 0; isLoading; n++) {
          const id = `r${lane}_${n}`;
          for (;;) {
            const result = await postSigned(serve.url, id, agent, 's', 5_000);
            if (result.status === 202 || result.status === 200) break;
            expect([0, 503]).toContain(result.status);
            refusedPosts++;
            await new Promise((resolve) => setTimeout(resolve, 50)); // the sender's back-off
          }
          ackedDeliveries.add(id);
          if (restartedAt > 0) ackedAfterRestart++;
        }
      };
      const enqueuer = async () => {
        for (let n = 0; isLoading; n++) {
          try {
            const job = await mr!.enqueue('effect', { ms: 30 });
            ackedJobs.add(job.id);
            if (restartedAt > 0) ackedAfterRestart++;
          } catch (error) {
            expect(error).toBeInstanceOf(StoreUnavailableError);
            refusedEnqueues++;
            await new Promise((resolve) => setTimeout(resolve, 50));
          }
        }
      };
      const load = Promise.all([sender(0), sender(1), sender(2), sender(3), enqueuer()]);

      await waitFor(() => ackedDeliveries.size >= 100 && ackedJobs.size >= 50, { timeoutMs: 15_000, description: 'load before the restart' });
      const downAt = Date.now();
      cluster.crash();
      // Stay down until the ingress says so (503 on /readyz), so the outage is felt everywhere.
      const readyWhileDown = await waitFor(
        async () => {
          const response = await fetch(`${serve.url}/readyz`);
          return response.status === 503 && response;
        },
        { timeoutMs: 15_000, intervalMs: 50, description: 'readyz to report the store down' },
      );
      expect(readyWhileDown.headers.get('retry-after')).not.toBeNull();
      cluster.start();
      restartedAt = Date.now();
      const downtimeMs = restartedAt - downAt;
      // Recovery is proven by new acknowledgements of both kinds after the restart.
      const ackedAtRestart = { deliveries: ackedDeliveries.size, jobs: ackedJobs.size };
      await waitFor(() => ackedDeliveries.size >= ackedAtRestart.deliveries + 100 && ackedJobs.size >= ackedAtRestart.jobs + 50, {
        timeoutMs: 20_000,
        description: 'webhooks and enqueues to be acknowledged again after the restart',
      });
      const recoveredMs = Date.now() - restartedAt;
      isLoading = false;
      await load;
      agent.destroy();

      const bound = LEASE_MS + LEASE_MS / 2 + 10_000;
      const t0 = Date.now();
      await waitFor(
        async () => {
          const { pending, running } = (await mr!.stats()).byStatus;
          return pending === 0 && running === 0;
        },
        { timeoutMs: bound + 10_000, intervalMs: 100, description: 'every job to be terminal after the restart' },
      );
      const drainMs = Date.now() - t0;

      const reader = await openRawReader(db);
      try {
        const events = await reader.query("SELECT delivery_id AS d, count(*) AS n FROM mailroom_event WHERE source = 's' GROUP BY delivery_id");
        const stored = new Map(events.map((row) => [String(row.d), Number(row.n)]));
        expect([...ackedDeliveries].filter((id) => !stored.has(id))).toEqual([]);
        expect([...stored.values()].filter((n) => n !== 1)).toEqual([]);
        const jobs = await reader.query("SELECT id, status FROM mailroom_job WHERE type = 'effect'");
        const storedJobs = new Map(jobs.map((row) => [String(row.id), String(row.status)]));
        expect([...ackedJobs].filter((id) => !storedJobs.has(id))).toEqual([]);
        const [overdue] = await reader.query("SELECT count(*) AS n FROM mailroom_job WHERE status = 'running' AND lease_expires_at < now()");
        expect(Number(overdue!.n)).toBe(0);
        const [notDone] = await reader.query("SELECT count(*) AS n FROM mailroom_job WHERE status <> 'done'");
        expect(Number(notDone!.n)).toBe(0);
      } finally {
        await reader.close();
      }
      const ready = await fetch(`${serve.url}/readyz`);
      expect(ready.status).toBe(200);
      const report = analyseLedger(readLedger(ledger), new Map());
      expect(report.overlaps).toEqual([]);
      console.log(
        `[faults] postgres restart: downtimeMs=${downtimeMs} recoveredMs=${recoveredMs} drainMs=${drainMs} ackedDeliveries=${ackedDeliveries.size} ` +
          `ackedEnqueues=${ackedJobs.size} refusedPosts=${refusedPosts} refusedEnqueues=${refusedEnqueues} ackedAfterRestart=${ackedAfterRestart} ` +
          `lost=0 runningPastLease=0 duplicateExecutions=${report.duplicateExecutions} overlaps=0`,
      );
      serve.kill('SIGTERM');
      worker.kill('SIGTERM');
      expect((await serve.exited).code).toBe(0);
      expect((await worker.exited).code).toBe(0);
    },
    60_000,
  );
});
