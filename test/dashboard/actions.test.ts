// The dashboard's filtered replay and run-now as a logged-in browser uses them, over real
// HTTP on both stores: the confirmation page shows what a filter matches and carries the
// filter into its form; the action then replays exactly those dead jobs with the reason,
// and nothing without the tick, the reason or the session's CSRF token. Run now makes a
// delayed job due at once. (Single replay and cancel: safety.test.ts, browser.test.ts.)

import { afterEach, describe, expect, it } from 'vitest';
import { insertJob } from '../harness/factory.js';
import { closeTestMailrooms } from '../harness/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';
import { send } from '../ingress/ingress-kit.js';
import { csrfOf, DEAD_ERROR, logIn, withDashboard } from './dashboard-kit.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** The named form's action and its hidden fields, as a browser would post them. */
function formOf(html: string, action: string): Record<string, string> {
  const form = new RegExp(`<form method="post" action="${action.replace(/[/.]/g, '\\$&')}"[^>]*>([\\s\\S]*?)</form>`).exec(html)?.[1];
  if (form === undefined) throw new Error(`no form posting to ${action} in the page`);
  return Object.fromEntries([...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!]));
}

describe.each(storeHarnesses)('dashboard actions on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.skipIf(!harness.isAvailable)('confirms a filtered replay with what it matches, then replays only those with the reason, and not without the tick, reason or CSRF token', () =>
    withDashboard(harness, async (d) => {
      // Dead jobs the filter must leave alone: the same error on another type, another error.
      const sameError = await insertJob(d.mr.store, { type: 'export_csv', status: 'dead', maxAttempts: 1, error: DEAD_ERROR });
      // A send_email job the served worker could claim first: stamped (due) a day ahead, only the factory's claim takes it.
      const tomorrow = new Date(Date.now() + 86_400_000);
      const otherError = await insertJob(d.mr.store, { type: 'send_email', status: 'dead', maxAttempts: 1, error: 'Error: connect ETIMEDOUT', now: tomorrow });
      expect(otherError.attemptsLog.map((attempt) => attempt.workerId)).toEqual(['factory-worker']);
      const { cookie } = await logIn(d.url);
      const html = { accept: 'text/html', cookie };

      // The dead list offers the replay of what it shows; the confirmation page names the filter and the matches.
      const list = await send(d.url, '/dashboard/jobs?status=dead&type=send_email&error=mailbox', { method: 'GET', headers: html });
      expect(list.text).toContain('href="/dashboard/replay?type=send_email&amp;error=mailbox"');
      const confirm = await send(d.url, '/dashboard/replay?type=send_email&error=mailbox', { method: 'GET', headers: html });
      expect(confirm.status).toBe(200);
      expect(confirm.text).toMatch(/Every dead job whose type is (&quot;|")send_email(&quot;|") and last error contains (&quot;|")mailbox(&quot;|") goes back to pending/);
      expect(confirm.text).toContain('1 match, among them:');
      expect(confirm.text).toContain(`href="/dashboard/jobs/${d.deadJobId}"`);
      expect(confirm.text).not.toContain(`href="/dashboard/jobs/${sameError.id}"`);
      expect(confirm.text).not.toContain(`href="/dashboard/jobs/${otherError.id}"`);
      const fields = formOf(confirm.text, '/dashboard/actions/replay-filtered');
      expect(fields).toEqual({ csrf: expect.any(String), type: 'send_email', error: 'mailbox' });

      const post = (extra: Record<string, string>, headers: Record<string, string> = {}) =>
        send(d.url, '/dashboard/actions/replay-filtered', {
          headers: { ...FORM, ...html, 'sec-fetch-site': 'same-origin', ...headers },
          body: new URLSearchParams({ ...fields, ...extra }).toString(),
        });
      // Without the tick, without a reason, without the session's token: refused, nothing replayed.
      expect((await post({ reason: 'SMTP fixed' })).status).toBe(400);
      expect((await post({ confirm: 'yes' })).status).toBe(400);
      expect((await post({ reason: 'SMTP fixed', confirm: 'yes', csrf: 'forged' })).status).toBe(403);
      expect((await post({ reason: 'SMTP fixed', confirm: 'yes' }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
      for (const id of [d.deadJobId, sameError.id, otherError.id]) expect((await d.mr.getJob(id))!.replays).toEqual([]);

      // Confirmed with a reason: the matching job is replayed (and, fixed, runs to done); the others stay dead.
      d.fix();
      const replayed = await post({ reason: 'SMTP fixed', confirm: 'yes' });
      expect(replayed.status).toBe(303);
      expect(replayed.headers.location).toBe('/dashboard/jobs?status=pending&type=send_email');
      const job = await waitFor(async () => {
        const current = await d.mr.getJob(d.deadJobId);
        return current?.status === 'done' && current;
      }, { timeoutMs: 10_000, description: 'the replayed job to be done' });
      expect(job.replays).toMatchObject([{ by: 'dashboard', reason: 'SMTP fixed' }]);
      // Its page shows the replay between the run that died and the one that succeeded
      // (attempt numbers start again after a replay: "Attempt 1" twice, and why).
      const page = await send(d.url, `/dashboard/jobs/${d.deadJobId}`, { method: 'GET', headers: html });
      const timeline = /<ol class="timeline">([\s\S]*?)<\/ol>/.exec(page.text)?.[1] ?? '';
      const marks = [...timeline.matchAll(/<strong>(Attempt 1: \w+|Replayed)<\/strong>/g)].map((m) => m[1]);
      expect(marks).toEqual([`Attempt 1: ${job.attemptsLog[0]!.outcome}`, 'Replayed', 'Attempt 1: done']);
      expect(timeline).toContain('by dashboard · SMTP fixed');
      for (const id of [sameError.id, otherError.id]) {
        const untouched = (await d.mr.getJob(id))!;
        expect(untouched.status).toBe('dead');
        expect(untouched.replays).toEqual([]);
      }
    }));

  it.skipIf(!harness.isAvailable)('runs a delayed job now from its page, with the CSRF token only, and refuses it for a dead job', () =>
    withDashboard(harness, async (d) => {
      const delayed = await d.mr.enqueue('never_run' as never, {} as never, { delayMs: 3_600_000 });
      expect(delayed.runAt.getTime()).toBeGreaterThan(Date.now() + 3_000_000);
      const { cookie } = await logIn(d.url);
      const html = { accept: 'text/html', cookie };
      const jobPath = `/dashboard/jobs/${delayed.id}`;
      const page = await send(d.url, jobPath, { method: 'GET', headers: html });
      const fields = formOf(page.text, '/dashboard/actions/retry-now');
      expect(fields).toEqual({ csrf: await csrfOf(d.url, cookie, jobPath), id: delayed.id });

      const runNow = (body: Record<string, string>) =>
        send(d.url, '/dashboard/actions/retry-now', { headers: { ...FORM, ...html, 'sec-fetch-site': 'same-origin' }, body: new URLSearchParams(body).toString() });
      expect((await runNow({ id: delayed.id })).status).toBe(403);
      expect((await runNow({ id: delayed.id, csrf: 'forged' })).status).toBe(403);
      expect((await d.mr.getJob(delayed.id))!.runAt.getTime()).toBe(delayed.runAt.getTime());

      const ran = await runNow(fields);
      expect(ran.status).toBe(303);
      expect(ran.headers.location).toBe(`${jobPath}?done=ran-now`);
      const after = await d.mr.getJob(delayed.id);
      expect(after!.status).toBe('pending');
      expect(after!.runAt.getTime()).toBeLessThanOrEqual(Date.now());
      const shown = await send(d.url, ran.headers.location as string, { method: 'GET', headers: html });
      expect(shown.text).toContain('Made due now: a worker takes it on its next claim.');

      // A dead job is not "run now" but replayed: refused with advice, and still dead.
      const refused = await runNow({ id: d.deadJobId, csrf: fields.csrf! });
      expect(refused.status).toBe(409);
      expect(refused.text).toContain('Replay it to run it again.');
      expect((await d.mr.getJob(d.deadJobId))!.status).toBe('dead');
    }));

  it.skipIf(!harness.isAvailable)('refuses a filtered replay it cannot narrow (queue, batch, enqueued before) rather than replaying every dead job, and counts no cancelled job', () =>
    withDashboard(harness, async (d) => {
      const cancelled = await d.mr.enqueue('never_run' as never, {} as never, { delayMs: 3_600_000 });
      await d.mr.cancel(cancelled.id, { reason: 'not wanted' });
      expect((await d.mr.getJob(cancelled.id))!.status).toBe('dead');
      const { cookie } = await logIn(d.url);
      const html = { accept: 'text/html', cookie };

      // The dead list carries every filter it shows into the replay link, so none is dropped on the way.
      const list = await send(d.url, '/dashboard/jobs?status=dead&queue=default&before=2099-01-01T00%3A00', { method: 'GET', headers: html });
      expect(list.status).toBe(200);
      expect(list.text).toContain('href="/dashboard/replay?queue=default&amp;before=2099-01-01T00%3A00"');
      // A dead list with nothing in it offers no replay.
      const empty = await send(d.url, '/dashboard/jobs?status=dead&type=nothing_like_this', { method: 'GET', headers: html });
      expect(empty.text).toContain('No jobs match.');
      expect(empty.text).not.toContain('Replay every dead job');
      for (const [query, named] of [['queue=default', 'queue'], ['batch=1', 'batch'], ['before=2026-01-01T00%3A00', 'before'], ['queue=a&batch=2', 'queue, batch']] as const) {
        const page = await send(d.url, `/dashboard/replay?${query}`, { method: 'GET', headers: html });
        expect(page.status, query).toBe(200);
        expect(page.text, query).toContain(`A replay cannot be narrowed by ${named}.`);
        expect(page.text, query).not.toContain('action="/dashboard/actions/replay-filtered"');
      }

      // A post that names a filter the replay cannot apply is refused; nothing is replayed.
      const csrf = await csrfOf(d.url, cookie, '/dashboard/replay');
      const posted = await send(d.url, '/dashboard/actions/replay-filtered', {
        headers: { ...FORM, ...html, 'sec-fetch-site': 'same-origin' },
        body: new URLSearchParams({ csrf, queue: 'no-such-queue', reason: 'x', confirm: 'yes' }).toString(),
      });
      expect(posted.status).toBe(400);
      expect(posted.text).toContain('a replay cannot be narrowed by queue');
      for (const id of [d.deadJobId, cancelled.id]) expect((await d.mr.getJob(id))!.replays).toEqual([]);

      // Unfiltered, the count is what a replay takes: the dead job, not the cancelled one.
      const all = await send(d.url, '/dashboard/replay', { method: 'GET', headers: html });
      expect(all.text).toContain('1 match, among them:');
      expect(all.text).toContain(`href="/dashboard/jobs/${d.deadJobId}"`);
      expect(all.text).not.toContain(`href="/dashboard/jobs/${cancelled.id}"`);
    }));
});
