// The job and event lists' filters over real HTTP, on both stores: each filter narrows the
// served list to exactly the rows it names (by the ids the page links to), alone and
// combined, and a filter nothing matches says so. Error text, status and batch are
// covered in safety.test.ts and job-page.test.ts.

import { afterEach, describe, expect, it } from 'vitest';
import { closeTestMailrooms } from '../harness/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';
import { send } from '../ingress/ingress-kit.js';
import { TOKEN, withDashboard } from './dashboard-kit.js';
import type { ServedDashboard } from './dashboard-kit.js';

const bearer = { authorization: `Bearer ${TOKEN}`, accept: 'text/html' };

/** The ids of the rows a list page links to (`kind` is jobs or events), in page order. */
async function listed(d: ServedDashboard, kind: 'jobs' | 'events', query: string): Promise<string[]> {
  const page = await send(d.url, `/dashboard/${kind}?${query}`, { method: 'GET', headers: bearer });
  expect(page.status, query).toBe(200);
  return [...page.text.matchAll(new RegExp(`href="/dashboard/${kind}/(\\d+)"`, 'g'))].map((m) => m[1]!);
}

async function postEvent(d: ServedDashboard, source: string, body: Record<string, string>): Promise<string> {
  const posted = await send(d.url, `/hooks/${source}`, { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(posted.status).toBe(202);
  return String(posted.json.id);
}

describe.each(storeHarnesses)('dashboard lists on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.skipIf(!harness.isAvailable)('filters the jobs list by type, queue, source and enqueue time, alone and together', () =>
    withDashboard(harness, async (d) => {
      // Nothing runs resize_image here: both stay pending where they were put.
      const media = await d.mr.enqueue('resize_image' as never, { n: 1 } as never, { queue: 'media' });
      const plain = await d.mr.enqueue('resize_image' as never, { n: 2 } as never);

      expect(await listed(d, 'jobs', '')).toEqual([plain.id, media.id, d.pendingJobId, d.deadJobId]);
      expect(await listed(d, 'jobs', 'type=resize_image')).toEqual([plain.id, media.id]);
      expect(await listed(d, 'jobs', 'queue=media')).toEqual([media.id]);
      expect(await listed(d, 'jobs', 'type=resize_image&queue=default')).toEqual([plain.id]);
      expect(await listed(d, 'jobs', 'queue=default')).toEqual([plain.id, d.pendingJobId, d.deadJobId]);
      // Only the webhook's job has a source; jobs enqueued by code have none.
      expect(await listed(d, 'jobs', 'source=shop')).toEqual([d.deadJobId]);
      expect(await listed(d, 'jobs', 'source=shop&status=dead')).toEqual([d.deadJobId]);
      expect(await listed(d, 'jobs', 'source=crm')).toEqual([]);
      expect(await listed(d, 'jobs', 'type=send_email&queue=media')).toEqual([]);
      const none = await send(d.url, '/dashboard/jobs?type=no_such_type', { method: 'GET', headers: bearer });
      expect(none.text).toContain('No jobs match.');

      // Enqueue time: a cut after every job so far, then a job enqueued after the cut.
      const stored = await Promise.all([d.deadJobId, d.pendingJobId, media.id, plain.id].map(async (id) => (await d.mr.getJob(id))!.createdAt.getTime()));
      const cut = new Date(Math.max(...stored) + 1);
      await waitFor(() => Date.now() > cut.getTime() + 1, { timeoutMs: 1_000, description: 'the clock to pass the cut' });
      const later = await d.mr.enqueue('resize_image' as never, { n: 3 } as never, { queue: 'media' });
      expect(later.createdAt.getTime()).toBeGreaterThan(cut.getTime());
      const before = encodeURIComponent(cut.toISOString());
      expect(await listed(d, 'jobs', '')).toContain(later.id);
      expect(await listed(d, 'jobs', `before=${before}`)).toEqual([plain.id, media.id, d.pendingJobId, d.deadJobId]);
      expect(await listed(d, 'jobs', `before=${before}&queue=media`)).toEqual([media.id]);
      expect(await listed(d, 'jobs', `before=${encodeURIComponent(new Date(Math.min(...stored) - 60_000).toISOString())}`)).toEqual([]);
      expect((await send(d.url, '/dashboard/jobs?before=yesterday', { method: 'GET', headers: bearer })).status).toBe(400);
    }));

  it.skipIf(!harness.isAvailable)('filters the events list by source and by type, alone and together', () =>
    withDashboard(harness, async (d) => {
      const refunded = await postEvent(d, 'shop', { id: 'evt_2', type: 'order.refunded' });
      const contact = await postEvent(d, 'crm', { id: 'crm_1', kind: 'contact.created' });

      expect(await listed(d, 'events', '')).toEqual([contact, refunded, d.eventId]);
      expect(await listed(d, 'events', 'source=shop')).toEqual([refunded, d.eventId]);
      expect(await listed(d, 'events', 'source=crm')).toEqual([contact]);
      expect(await listed(d, 'events', 'type=order.refunded')).toEqual([refunded]);
      expect(await listed(d, 'events', 'type=contact.created')).toEqual([contact]);
      expect(await listed(d, 'events', 'source=shop&type=order.paid')).toEqual([d.eventId]);
      const none = await send(d.url, '/dashboard/events?source=shop&type=contact.created', { method: 'GET', headers: bearer });
      expect(none.text).toContain('No events match.');
      // The rows say what they were filtered on.
      const crm = await send(d.url, '/dashboard/events?source=crm', { method: 'GET', headers: bearer });
      expect(crm.text).toContain('<td>contact.created</td>');
      expect(crm.text).not.toContain('order.paid');
      // An event id nobody has is named as such, not as a missing route.
      const unknown = await send(d.url, '/dashboard/events/999999', { method: 'GET', headers: bearer });
      expect(unknown.status).toBe(404);
      expect(unknown.text).toContain('No event with id 999999.');
    }));
});
