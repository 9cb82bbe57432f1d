// The dashboard in a real browser (Debian's Chromium driven by playwright-core), on both
// stores: log in, see the dead job on the overview, find it by its error text, read the
// error, replay it with a reason, and see it done once the worker has run it. A page on
// another origin that posts a form to the dashboard changes nothing, and every request
// the browser makes stays on 127.0.0.1.
//
// With MAILROOM_SCREENSHOTS=1 (npm run screenshots) the SQLite run saves the pictures
// docs/dashboard.md shows into docs/images/.

import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { closeTestMailrooms } from '../harness/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';
import { closeOutgoingMailrooms } from '../outgoing/outgoing-kit.js';
import { DEAD_ERROR, SECRET_HEADER_VALUE, serveDashboard, TOKEN } from './dashboard-kit.js';
import { REFUSAL_EXCERPT, servePortal } from './portal-kit.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** No update checks, sync, field trials or QUIC: nothing of its own may leave the machine. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
];
const SCREENSHOTS = process.env.MAILROOM_SCREENSHOTS === '1' ? new URL('../../docs/images/', import.meta.url) : null;

let browser: Browser;

beforeAll(async () => {
  try {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, timeout: 30_000 });
  } catch (error) {
    throw new Error(
      `Chromium did not start from ${CHROMIUM}: install Debian's package (apt-get install -y chromium; .ci/run does) ` +
        `or set CHROMIUM_PATH. ${(error as Error).message.split('\n')[0]}`,
    );
  }
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

/** A page on another origin that posts a cancel form to the dashboard as soon as it loads. */
async function startForgery(target: string, jobId: string): Promise<{ server: Server; url: string }> {
  const html =
    `<!DOCTYPE html><form id="f" method="post" action="${target}/dashboard/actions/cancel">` +
    `<input name="id" value="${jobId}"><input name="csrf" value="guessed"></form>` +
    `<script>document.getElementById('f').submit()</script>`;
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(html);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/` };
}

async function shoot(page: Page, name: string, harnessName: string): Promise<void> {
  if (SCREENSHOTS === null || harnessName !== 'sqlite') return;
  await page.screenshot({ path: new URL(`dashboard-${name}.png`, SCREENSHOTS).pathname, fullPage: false });
}

describe.each(storeHarnesses)('the dashboard in Chromium on $name', (harness) => {
  afterEach(async () => {
    await closeTestMailrooms(harness);
    await closeOutgoingMailrooms(harness);
  });

  it.skipIf(!harness.isAvailable)('finds a dead job by its error, replays it and sees it done; pauses a queue and sees nothing claimed; a forged post changes nothing; nothing leaves 127.0.0.1', async () => {
    const d = await serveDashboard(harness);
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 }, deviceScaleFactor: 1 });
    const hosts = new Set<string>();
    context.on('request', (request) => void hosts.add(new URL(request.url()).hostname));
    const forgery = await startForgery(d.url, d.pendingJobId);
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);

      // Not logged in: the dashboard sends the browser to the login page.
      await page.goto(`${d.url}/dashboard`);
      expect(new URL(page.url()).pathname).toBe('/dashboard/login');
      await shoot(page, 'login', harness.name);
      await page.fill('input[name=token]', TOKEN);
      await Promise.all([page.waitForURL(`${d.url}/dashboard`), page.click('button[type=submit]')]);

      // The overview counts the dead job, and refreshes itself: a job enqueued now shows
      // up in the pending count without a reload.
      await page.locator('.card.status-dead .count', { hasText: '1' }).waitFor();
      await shoot(page, 'overview', harness.name);
      expect(await page.locator('.card.status-pending .count').textContent()).toBe('1');
      await d.mr.enqueue('never_run' as never, {} as never);
      await page.locator('.card.status-pending .count', { hasText: '2' }).waitFor({ timeout: 15_000 });
      expect(await page.locator('#overview').getAttribute('data-refreshed-at')).not.toBeNull();

      // Search it by its error text.
      await page.click('nav >> text=Jobs');
      await page.fill('input[name=error]', 'mailbox unavailable');
      await Promise.all([page.waitForURL(/error=mailbox/), page.click('form.filters button[type=submit]')]);
      const row = page.locator('table.jobs tbody tr');
      expect(await row.count()).toBe(1);
      expect(await row.locator('.error-text').textContent()).toContain('SMTP 554');
      await shoot(page, 'jobs', harness.name);

      // Read the error on the job's page; the secret header's value is nowhere on it.
      await Promise.all([page.waitForURL(new RegExp(`/dashboard/jobs/${d.deadJobId}$`)), row.locator(`a[href="/dashboard/jobs/${d.deadJobId}"]`).click()]);
      expect(await page.locator('ol.timeline').textContent()).toContain(DEAD_ERROR);
      expect(await page.content()).not.toContain(SECRET_HEADER_VALUE);
      await shoot(page, 'job', harness.name);

      // Replay it with a reason, once the cause is fixed; the worker runs it to done.
      d.fix();
      await page.fill('input[name=reason]', 'SMTP credentials rotated');
      await page.check('input[name=confirm]');
      await Promise.all([page.waitForURL(/done=replayed/), page.click('.actions button[type=submit]')]);
      expect(await page.locator('.notice').textContent()).toContain('Replayed');
      await waitFor(async () => (await d.mr.getJob(d.deadJobId))?.status === 'done', { timeoutMs: 10_000, description: 'the replayed job to be done' });
      await page.reload();
      expect(await page.locator('h1 .status').textContent()).toBe('done');
      const text = await page.locator('body').textContent();
      expect(text).toContain('SMTP credentials rotated');
      expect(text).toContain('msg-1');
      await shoot(page, 'job-done', harness.name);

      // Pause the queue from the overview: a job enqueued into it waits while one in another
      // queue, enqueued after it, runs; resume lets it run.
      await page.goto(`${d.url}/dashboard`);
      await page.fill('input[aria-label="reason to pause default"]', 'SMTP provider down');
      await Promise.all([page.waitForURL(/done=paused/), page.click('form:has(input[aria-label="reason to pause default"]) button[type=submit]')]);
      expect(await page.locator('.paused-note').textContent()).toContain('default');
      expect(await page.locator('body').textContent()).toContain('SMTP provider down');
      const held = await d.mr.enqueue('send_email', { to: 'held@example.com' });
      const other = await d.mr.enqueue('send_email', { to: 'other@example.com' }, { queue: 'urgent' });
      await waitFor(async () => (await d.mr.getJob(other.id))?.status === 'done', { timeoutMs: 10_000, description: 'the other queue to run' });
      expect((await d.mr.getJob(held.id))!.status).toBe('pending');
      await page.reload();
      await Promise.all([page.waitForURL(/done=resumed/), page.click('form[action$="/actions/resume-queue"] button[type=submit]')]);
      await waitFor(async () => (await d.mr.getJob(held.id))?.status === 'done', { timeoutMs: 10_000, description: 'the resumed queue to run' });

      // A page on another origin posts a cancel with a guessed token: refused, nothing changes.
      const attack = await context.newPage();
      const refused = attack.waitForResponse((response) => response.url().includes('/dashboard/actions/cancel'));
      await attack.goto(forgery.url);
      expect((await refused).status()).toBe(403);
      expect((await d.mr.getJob(d.pendingJobId))!.status).toBe('pending');

      expect([...hosts]).toEqual(['127.0.0.1']);
    } finally {
      await context.close();
      await new Promise<void>((resolve) => forgery.server.close(() => resolve()));
      await d.server.stop({ timeoutMs: 1_000 });
    }
  }, 60_000);

  it.skipIf(!harness.isAvailable)("opens a tenant's portal link and sees only that tenant; another tenant's delivery is refused; adds an endpoint and sees its secret once; re-sends a failed delivery and sees it delivered; the operator sees endpoint health and disables one", async () => {
    const p = await servePortal(harness);
    const context = await browser.newContext({ viewport: { width: 1100, height: 760 }, deviceScaleFactor: 1 });
    const hosts = new Set<string>();
    context.on('request', (request) => void hosts.add(new URL(request.url()).hostname));
    try {
      const page = await context.newPage();
      page.setDefaultTimeout(15_000);

      // The link lands on acme's endpoints: acme's receiver, nothing of globex.
      await page.goto(await p.mr.portal.link('acme', { ttlMs: 600_000 }));
      expect(new URL(page.url()).pathname).toBe('/portal');
      expect(await page.locator('table.endpoints tbody tr').count()).toBe(1);
      let text = (await page.locator('body').textContent())!;
      expect(text).toContain(p.acme.receiver.url);
      expect(text).not.toContain('globex');
      await shoot(page, 'portal', harness.name);

      // Its endpoint lists the failed delivery; the delivery shows the attempt's status and excerpt.
      await Promise.all([page.waitForURL(new RegExp(`/portal/endpoints/${p.acme.endpoint.id}$`)), page.click(`a[href="/portal/endpoints/${p.acme.endpoint.id}"] >> nth=0`)]);
      const deliveryPath = `/portal/endpoints/${p.acme.endpoint.id}/deliveries/${p.acme.failedDeliveryId}`;
      await Promise.all([page.waitForURL(new RegExp(`${deliveryPath}$`)), page.click(`a[href="${deliveryPath}"]`)]);
      expect(await page.locator('table.attempts tbody tr td.num').nth(1).textContent()).toBe('400');
      expect(await page.locator('code.excerpt').textContent()).toBe(REFUSAL_EXCERPT);

      // Another tenant's delivery, through their endpoint or through ours: refused, nothing shown.
      for (const path of [`/portal/endpoints/${p.globex.endpoint.id}/deliveries/${p.globex.deliveryId}`, `/portal/endpoints/${p.acme.endpoint.id}/deliveries/${p.globex.deliveryId}`]) {
        const refused = await page.goto(`${p.url}${path}`);
        expect(refused!.status()).toBe(404);
        expect(await page.locator('body').textContent()).not.toContain('globex');
      }
      // No operator page: the dashboard asks for its own login.
      await page.goto(`${p.url}/dashboard/endpoints`);
      expect(new URL(page.url()).pathname).toBe('/dashboard/login');

      // The receiver is fixed; re-send the failed delivery and see it delivered.
      p.fix();
      await page.goto(`${p.url}${deliveryPath}`);
      await shoot(page, 'portal-delivery', harness.name);
      await Promise.all([page.waitForURL(/done=resent/), page.click('form[action="/portal/actions/resend"] button')]);
      expect(await page.locator('.notice').textContent()).toContain('Re-sent');
      await waitFor(async () => (await p.mr.deliveries.list({ endpointId: p.acme.endpoint.id }))[0]!.status === 'delivered', {
        timeoutMs: 10_000,
        description: 'the re-sent delivery to arrive',
      });
      await page.reload();
      expect(await page.locator('h1 .status').textContent()).toBe('delivered');
      expect(p.acme.receiver.received.at(-1)!.verifiedWith).toBe(p.acme.secret);

      // Add an endpoint: its secret shows once, on that answer only.
      await page.goto(`${p.url}/portal`);
      await page.fill('input[name=url]', `${p.acme.receiver.url}/second`);
      await page.fill('input[name=eventTypes]', 'invoice.paid');
      await Promise.all([page.waitForURL(/\/portal\/actions\/add-endpoint$/), page.click('form[action="/portal/actions/add-endpoint"] button')]);
      const secret = (await page.locator('pre.secret').textContent())!;
      expect(secret).toMatch(/^whsec_/);
      await page.goto(`${p.url}/portal`);
      expect(await page.locator('table.endpoints tbody tr').count()).toBe(2);
      expect(await page.content()).not.toContain(secret);

      // A link for globex opened while signed in as acme: asked first, and the switch is this
      // session's POST, which the browser sends with its origin under the page's referrer policy.
      await page.goto(await p.mr.portal.link('globex', { ttlMs: 600_000 }));
      expect(await page.locator('h1').textContent()).toBe('Switch to another account?');
      await page.goto(`${p.url}/portal`);
      expect(await page.locator('body').textContent()).toContain(p.acme.receiver.url);
      await page.goto(await p.mr.portal.link('globex', { ttlMs: 600_000 }));
      await Promise.all([page.waitForURL(`${p.url}/portal`), page.click('form[action="/portal/actions/switch"] button')]);
      text = (await page.locator('body').textContent())!;
      expect(text).toContain(p.globex.receiver.url);
      expect(text).not.toContain(p.acme.receiver.url);

      // The operator's endpoints page: both tenants with their health; disable globex's with a reason.
      await page.goto(`${p.url}/dashboard/login`);
      await page.fill('input[name=token]', TOKEN);
      await Promise.all([page.waitForURL(`${p.url}/dashboard`), page.click('button[type=submit]')]);
      await page.click('nav >> text=Endpoints');
      const globexRow = page.locator(`tr[data-endpoint="${p.globex.endpoint.id}"]`);
      expect(await globexRow.locator('td.num').nth(1).textContent()).toBe('100.0%');
      expect(await globexRow.locator('.breaker').textContent()).toBe('closed');
      expect(await page.content()).not.toContain(secret);
      expect(await page.content()).not.toContain('whsec_');
      await globexRow.locator('input[name=reason]').fill('customer asked for a pause');
      await Promise.all([page.waitForURL(/done=endpoint-disabled/), globexRow.locator('button.danger').click()]);
      expect(await page.locator(`tr[data-endpoint="${p.globex.endpoint.id}"] .state`).textContent()).toBe('disabled: customer asked for a pause');
      expect((await p.mr.endpoints.get(p.globex.endpoint.id))!.enabled).toBe(false);
      await shoot(page, 'endpoints', harness.name);

      expect([...hosts]).toEqual(['127.0.0.1']);
    } finally {
      await context.close();
      await p.close();
    }
  }, 60_000);
});
