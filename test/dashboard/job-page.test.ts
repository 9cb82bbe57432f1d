// The job page shows what a handler reported with ctx.progress and, for a batch's child,
// the batch's progress with a link to its children (SPEC §9a: "result, progress", "batches
// with progress"); its payload and details as served hide the configured redaction paths
// and secret-named keys, and its attempt timeline shows each error, stack, duration and
// the details the handler recorded. The event page hides the same keys in the body.

import { afterEach, describe, expect, it } from 'vitest';
import { closeTestMailrooms } from '../harness/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { asFailed } from '../harness/finishes.js';
import { send } from '../ingress/ingress-kit.js';
import { SECRET_HEADER_VALUE, TOKEN, withDashboard } from './dashboard-kit.js';

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

  it.skipIf(!harness.isAvailable)("shows a webhook's job's payload: its event's parsed body, escaped", () =>
    withDashboard(harness, async (d) => {
      const page = await send(d.url, `/dashboard/jobs/${d.deadJobId}`, { method: 'GET', headers: bearer });
      expect(page.status).toBe(200);
      const payload = page.text.slice(page.text.indexOf('<h2>Payload</h2>'), page.text.indexOf('<h2>Result</h2>'));
      expect(payload).toContain(`The body of event ${d.eventId}, as the handler gets it:`);
      expect(payload).toContain('evt_1');
      expect(payload).toContain('&lt;img src=x');
      expect(payload).not.toContain('<img');
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

  it.skipIf(!harness.isAvailable)('serves the payload and details with configured paths and secret-named keys redacted, and an attempt timeline with error, stack, duration and details', () =>
    withDashboard(
      harness,
      async (d) => {
        const card = '4242424242424242';
        const job = await d.mr.enqueue('charge', {
          card: { number: card, brand: 'visa' },
          customer: { email: 'ada@example.com', name: 'Ada' },
          apiKey: 'sk_payload_never_shown',
        });
        // One attempt through the store at pinned times (1.5 s apart), failed for good with
        // a stack and details, as a worker would write it.
        const startedAt = new Date(job.runAt.getTime() + 1);
        const [claimed] = await d.mr.store.jobClaim({ workerId: 'charge-worker-7', types: ['charge'], queues: null, limit: 1, leaseMs: 60_000, now: startedAt });
        const stack = 'Error: card declined\n    at chargeCard (charge.ts:12:9)\n    at <anonymous>';
        const details = { gateway: 'test-gateway', declineCode: 'do_not_honor', card: { number: card }, token: 'tok_never_shown' };
        await d.mr.store.jobFinishMany({
          finishes: asFailed([
            { id: claimed!.id, leaseToken: claimed!.leaseToken, error: 'Error: card declined', stack, outcome: 'failed', retryDelayMs: null, deadReason: 'permanent', detailsJson: JSON.stringify(details) },
          ]),
          now: new Date(startedAt.getTime() + 1_500),
        });

        const page = await send(d.url, `/dashboard/jobs/${job.id}`, { method: 'GET', headers: bearer });
        expect(page.status).toBe(200);
        for (const hidden of [card, 'ada@example.com', 'sk_payload_never_shown', 'tok_never_shown']) expect(page.text).not.toContain(hidden);
        const payload = /<h2>Payload<\/h2>\s*<pre[^>]*>([\s\S]*?)<\/pre>/.exec(page.text)?.[1];
        expect(JSON.parse(unescapeHtml(payload!))).toEqual({
          card: { number: '[redacted]', brand: 'visa' },
          customer: { email: '[redacted]', name: 'Ada' },
          apiKey: '[redacted]',
        });

        const timeline = /<ol class="timeline">([\s\S]*?)<\/ol>/.exec(page.text)?.[1] ?? '';
        expect(timeline).toContain('Attempt 1: failed');
        expect(timeline).toContain(' · took 1.5s');
        expect(timeline).toContain(' · charge-worker-7');
        expect(timeline).toContain('Error: card declined');
        expect(timeline).toMatch(/<summary>Stack<\/summary>\s*<pre[^>]*>Error: card declined\n {4}at chargeCard \(charge\.ts:12:9\)\n {4}at &lt;anonymous>/);
        const shownDetails = /<summary>Details<\/summary>\s*<pre[^>]*>([\s\S]*?)<\/pre>/.exec(timeline)?.[1];
        expect(JSON.parse(unescapeHtml(shownDetails!))).toEqual({ gateway: 'test-gateway', declineCode: 'do_not_honor', card: { number: '[redacted]' }, token: '[redacted]' });

        // What is stored is untouched: only the page hides it.
        const stored = await d.mr.getJob(job.id);
        expect((stored!.payload as { card: { number: string } }).card.number).toBe(card);
        expect(stored!.attemptsLog[0]!.details).toEqual(details);
      },
      { redactPaths: ['card.number', '*.email'] },
    ));

  it.skipIf(!harness.isAvailable)("hides an event body's secrets on the event's page as its job's page does", () =>
    withDashboard(
      harness,
      async (d) => {
        const card = '4242424242424242';
        const posted = await send(d.url, '/hooks/shop', {
          headers: { 'content-type': 'application/json', 'x-internal-token': SECRET_HEADER_VALUE, 'x-shop-topic': 'customers/create' },
          body: JSON.stringify({ id: 'evt_secret', password: 'pw_never_shown', card: { number: card, brand: 'visa' }, note: 'shown' }),
        });
        expect(posted.status).toBe(202);
        const page = await send(d.url, `/dashboard/events/${String(posted.json.id)}`, { method: 'GET', headers: bearer });
        expect(page.status).toBe(200);
        for (const hidden of [card, 'pw_never_shown']) expect(page.text).not.toContain(hidden);
        const body = /<h2>Body \(\d+ bytes\)<\/h2>\s*<pre[^>]*>([\s\S]*?)<\/pre>/.exec(page.text)?.[1];
        expect(JSON.parse(unescapeHtml(body!))).toEqual({ id: 'evt_secret', password: '[redacted]', card: { number: '[redacted]', brand: 'visa' }, note: 'shown' });
        // The stored body is untouched.
        expect(JSON.parse((await d.mr.getEvent(String(posted.json.id)))!.rawBody.toString())).toMatchObject({ password: 'pw_never_shown' });
      },
      { redactPaths: ['card.number'] },
    ));
});

/** Text as preact-render-to-string escapes it, back to what it was. */
function unescapeHtml(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&amp;/g, '&');
}
