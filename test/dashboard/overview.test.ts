// The overview as served, on both stores: the age of the oldest job that is due and
// waiting, overall and per queue, on the page and in the panel the page refreshes; a job
// delayed into the future is not "waiting" yet.

import { afterEach, describe, expect, it } from 'vitest';
import { closeTestMailrooms } from '../harness/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { send } from '../ingress/ingress-kit.js';
import { TOKEN, withDashboard } from './dashboard-kit.js';

const bearer = { authorization: `Bearer ${TOKEN}`, accept: 'text/html' };
/** 2 h 05 min: formatted `2h 05m` (or `2h 06m` should the test take a minute). */
const OVERDUE_MS = (2 * 60 + 5) * 60_000;
const AGE = /2h 0[56]m/;

/** The cells of the queue table's row for `queue`. */
function queueRow(html: string, queue: string): string {
  const row = new RegExp(`<tr><td><a href="/dashboard/jobs\\?queue=${queue}">${queue}</a></td>([\\s\\S]*?)</tr>`).exec(html)?.[1];
  if (row === undefined) throw new Error(`no row for queue ${queue}`);
  return row;
}

describe.each(storeHarnesses)('dashboard overview on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.skipIf(!harness.isAvailable)("shows the oldest due pending job's age, overall and per queue, and ignores a job not yet due", () =>
    withDashboard(harness, async (d) => {
      await d.mr.enqueue('never_run' as never, {} as never, { queue: 'reports', runAt: new Date(Date.now() - OVERDUE_MS) });
      await d.mr.enqueue('never_run' as never, {} as never, { queue: 'later', delayMs: 3_600_000 });
      for (const path of ['/dashboard', '/dashboard/live/overview']) {
        const page = await send(d.url, path, { method: 'GET', headers: bearer });
        expect(page.status).toBe(200);
        const card = /<span class="count">([^<]*)<\/span><span class="what">oldest due pending<\/span>/.exec(page.text)?.[1];
        expect(card, path).toMatch(AGE);
        expect(queueRow(page.text, 'reports'), path).toMatch(new RegExp(`<td class="num">${AGE.source}</td>`));
        // The kit's pending job has waited for milliseconds; the delayed one is not due at all.
        expect(queueRow(page.text, 'default'), path).toMatch(/<td class="num">\d+(ms|\.\ds)<\/td>/);
        expect(queueRow(page.text, 'later'), path).toContain('<td class="num">-</td>');
      }
    }));

  it.skipIf(!harness.isAvailable)('shows a queue paused before it has any job, with zero counts and its resume form, on the page and the panel', () =>
    withDashboard(harness, async (d) => {
      await d.mr.pauseQueue('imports', { reason: 'before the deploy' });
      for (const path of ['/dashboard', '/dashboard/live/overview']) {
        const page = await send(d.url, path, { method: 'GET', headers: bearer });
        expect(page.status, path).toBe(200);
        const row = queueRow(page.text, 'imports');
        expect(row, path).toContain('<a href="/dashboard/jobs?queue=imports&amp;status=pending">0</a>');
        expect(row, path).toContain('status-paused');
        expect(row, path).toContain('action="/dashboard/actions/resume-queue"');
      }
    }));
});
