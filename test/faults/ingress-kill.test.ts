// Fault: kill -9 `mailroom serve` (a real child process: ingress plus its worker) while
// 1,000 signed webhooks are in flight. Every delivery answered 2xx must be stored; a
// sender's retry of everything else (reset, refused, 503) against the restarted server
// must end with exactly one event, and one job, per delivery id. Deliveries stored but
// never answered (the kill landed between commit and response) come back as 200
// duplicates: the count is printed. The jobs the killed server was running are rescued
// and finished by the restarted one.

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { analyseLedger, boundedAgent, cleanupFaults, openRawReader, postSigned, readLedger, retryUntilAcked, startServe, tempDir, writeServeConfig } from './kit.js';
import type { PostResult } from './kit.js';

const DELIVERIES = 1_000;
const KILL_AFTER_ACKS = 250;

describe.each(storeHarnesses)('kill -9 of mailroom serve on $name', (harness) => {
  afterEach(async () => {
    cleanupFaults();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)(
    'keeps every acknowledged delivery, and a client retry of the rest stores each delivery exactly once',
    async () => {
      const { mr, url: db } = await openTestMailroom(harness);
      const dir = tempDir();
      const ledger = join(dir, 'ledger.txt');
      const config = writeServeConfig(dir);
      const first = await startServe({ db, config, ledger, cwd: dir });
      const agent = boundedAgent(100);
      const ids = Array.from({ length: DELIVERIES }, (_, i) => `dlv_${i}`);

      let acks = 0;
      let killedAt = 0;
      const results: PostResult[] = await Promise.all(
        ids.map((id) =>
          postSigned(first.url, id, agent).then((result) => {
            if (result.status >= 200 && result.status < 300 && ++acks === KILL_AFTER_ACKS) {
              killedAt = Date.now();
              first.kill('SIGKILL');
            }
            return result;
          }),
        ),
      );
      await first.exited;
      agent.destroy();
      const acked = results.filter((r) => r.status >= 200 && r.status < 300).map((r) => r.deliveryId);
      const refused = results.filter((r) => r.status < 200 || r.status >= 300);
      expect(killedAt).toBeGreaterThan(0);
      expect(acked.length + refused.length).toBe(DELIVERIES);

      // Every acknowledged delivery is stored, with its job.
      const stored = new Set((await storedDeliveries(db)).counts.keys());
      const missing = acked.filter((id) => !stored.has(id));
      expect(missing).toEqual([]);
      const storedUnacked = refused.filter((r) => stored.has(r.deliveryId)).length;

      // The sender retries everything that was not acknowledged, against a new server.
      const second = await startServe({ db, config, ledger, cwd: dir });
      const retryAgent = boundedAgent(50);
      const retried = await retryUntilAcked(() => second.url, refused.map((r) => r.deliveryId), retryAgent, 20_000);
      // And an acknowledged one again, which must be a duplicate.
      const again = await postSigned(second.url, acked[0]!, retryAgent);
      retryAgent.destroy();
      expect(again.status).toBe(200);
      const duplicates = retried.filter((r) => r.status === 200).length;
      expect(duplicates).toBe(storedUnacked);
      expect(retried.filter((r) => r.status === 202)).toHaveLength(refused.length - storedUnacked);

      const { counts, eventsWithoutJob } = await storedDeliveries(db);
      expect(counts.size).toBe(DELIVERIES);
      expect([...counts.values()].filter((n) => n !== 1)).toEqual([]);
      expect(eventsWithoutJob).toBe(0); // the fan-out committed with its event
      expect(await mr.store.jobList({ source: 's', limit: 10_000 })).toHaveLength(DELIVERIES);

      // The restarted server finishes every job, including those the kill cut short.
      await waitFor(
        async () => {
          const { pending, running, done } = (await mr.stats()).byStatus;
          return pending === 0 && running === 0 && done === DELIVERIES;
        },
        { timeoutMs: 20_000, intervalMs: 50, description: 'every event job to be done' },
      );
      const report = analyseLedger(readLedger(ledger), new Map([[first.pid, killedAt]]));
      expect(report.overlaps).toEqual([]);
      console.log(
        `[faults] ${harness.name} serve kill -9: deliveries=${DELIVERIES} ackedBeforeKill=${acked.length} refusedOrCut=${refused.length} ` +
          `storedButUnacked=${storedUnacked} retried202=${retried.length - duplicates} retried200dup=${duplicates} ` +
          `eventsPerDelivery=1 lostAcks=0 jobDuplicateExecutions=${report.duplicateExecutions} overlaps=0`,
      );
      second.kill('SIGTERM');
      expect((await second.exited).code).toBe(0);
    },
    60_000,
  );
});

/** delivery id -> number of stored events, and how many events have no job. */
async function storedDeliveries(db: string): Promise<{ counts: Map<string, number>; eventsWithoutJob: number }> {
  const reader = await openRawReader(db);
  try {
    const rows = await reader.query("SELECT delivery_id AS d, count(*) AS n FROM mailroom_event WHERE source = 's' GROUP BY delivery_id");
    const counts = new Map(rows.map((row) => [String(row.d), Number(row.n)]));
    const [orphans] = await reader.query('SELECT count(*) AS n FROM mailroom_event e WHERE NOT EXISTS (SELECT 1 FROM mailroom_job j WHERE j.event_id = e.id)');
    return { counts, eventsWithoutJob: Number(orphans!.n) };
  } finally {
    await reader.close();
  }
}
