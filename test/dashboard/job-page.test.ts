// The job page shows what a handler reported with ctx.progress and, for a batch's child,
// the batch's progress with a link to its children (SPEC §9a: "result, progress", "batches
// with progress").

import { afterEach, describe, expect, it } from 'vitest';
import { closeTestMailrooms } from '../harness/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { send } from '../ingress/ingress-kit.js';
import { TOKEN, withDashboard } from './dashboard-kit.js';

const bearer = { authorization: `Bearer ${TOKEN}`, accept: 'text/html' };

describe.each(storeHarnesses)('dashboard job page on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.skipIf(!harness.isAvailable)("shows a child's batch with its progress, lists the batch's children, and refuses a bad batch id", () =>
    withDashboard(harness, async (d) => {
      const batch = await d.mr.enqueueBatch(
        [
          { type: 'page', payload: { n: 1 } },
          { type: 'page', payload: { n: 2 } },
          { type: 'page', payload: { n: 3 } },
        ],
        { then: { type: 'assemble', payload: {} } },
      );
      const [first, second] = batch.jobs;
      await d.mr.cancel(first!.id, { reason: 'not needed' });
      const page = await send(d.url, `/dashboard/jobs/${second!.id}`, { method: 'GET', headers: bearer });
      expect(page.status).toBe(200);
      expect(page.text).toContain(`1 of 3 ended (0 done, 1 dead)`);
      expect(page.text).toContain(`/dashboard/jobs?batch=${batch.id}`);
      const children = await send(d.url, `/dashboard/jobs?batch=${batch.id}`, { method: 'GET', headers: bearer });
      expect(children.status).toBe(200);
      for (const child of batch.jobs) expect(children.text).toContain(`/dashboard/jobs/${child.id}`);
      expect(children.text).not.toContain(`/dashboard/jobs/${d.deadJobId}"`);
      expect((await send(d.url, "/dashboard/jobs?batch=1'--", { method: 'GET', headers: bearer })).status).toBe(400);
    }));

  it.skipIf(!harness.isAvailable)('shows the progress a running job reported', () =>
    withDashboard(harness, async (d) => {
      const job = await d.mr.enqueue('report', {});
      // A worker's claim and progress report, straight through the store.
      const [claimed] = await d.mr.store.jobClaim({ workerId: 'w', types: ['report'], queues: null, limit: 1, leaseMs: 60_000 });
      await d.mr.store.jobProgressMany({ updates: [{ id: claimed!.id, leaseToken: claimed!.leaseToken, fraction: 0.5, note: 'half the <pages>' }] });
      const page = await send(d.url, `/dashboard/jobs/${job.id}`, { method: 'GET', headers: bearer });
      expect(page.text).toContain('50 %: half the &lt;pages>');
    }));
});
