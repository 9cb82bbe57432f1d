// The dashboard's safety model over real HTTP, on both stores: no route but login and the
// static assets answers without credentials (a browser is sent to login, a script gets
// 401, neither sees data); a bearer token works for scripts; a session comes only from
// the login form (with its own CSRF token) and is a signed id, not the token; a POST with
// a session needs the session's CSRF token and a same-origin request; values are escaped
// and secret-looking headers hidden.

import { afterEach, describe, expect, it } from 'vitest';
import { closeTestMailrooms } from '../harness/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { send } from '../ingress/ingress-kit.js';
import { BODY_MARKUP, cookieFrom, csrfOf, DEAD_ERROR, everyDashboardRoute, logIn, SECRET_HEADER_VALUE, TOKEN, withDashboard } from './dashboard-kit.js';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

describe.each(storeHarnesses)('dashboard safety on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.skipIf(!harness.isAvailable)('refuses every route without credentials, showing no data', () =>
    withDashboard(harness, async (d) => {
      let wrongTokens = 0;
      for (const route of everyDashboardRoute(d)) {
        for (const accept of ['application/json', 'text/html']) {
          const answer = await send(d.url, route.path, { method: route.method, headers: { ...FORM, accept }, body: route.body });
          const where = `${route.method} ${route.path} (${accept})`;
          if (accept === 'text/html' && route.method === 'GET') {
            expect(answer.status, where).toBe(303);
            expect(answer.headers.location, where).toMatch(/^\/dashboard\/login\?next=/);
          } else {
            expect(answer.status, where).toBe(401);
          }
          expect(answer.text, where).not.toContain('SMTP');
          expect(answer.text, where).not.toContain('send_email');
        }
        // A wrong bearer token is refused the same way; past 10 from this address in a
        // minute, unchecked, with 429 (the login throttle).
        const wrong = await send(d.url, route.path, { method: route.method, headers: { ...FORM, authorization: 'Bearer nope' }, body: route.body });
        expect(wrong.status).toBe(++wrongTokens <= 10 ? 401 : 429);
        expect(wrong.text).not.toContain('SMTP');
      }
      expect((await d.mr.getJob(d.deadJobId))!.status).toBe('dead');
      expect((await d.mr.getJob(d.pendingJobId))!.status).toBe('pending');
    }));

  it.skipIf(!harness.isAvailable)('logs in with the token into a signed HttpOnly SameSite=Strict session, and refuses a wrong token or a forged login', () =>
    withDashboard(harness, async (d) => {
      const { cookie, response } = await logIn(d.url);
      expect(response.status).toBe(303);
      expect(response.headers.location).toBe('/dashboard/jobs');
      const setCookie = ([] as string[]).concat(response.headers['set-cookie'] ?? []).find((line) => line.startsWith('mailroom_session='))!;
      expect(setCookie).toMatch(/; HttpOnly/);
      expect(setCookie).toMatch(/; SameSite=Strict/);
      expect(setCookie).toMatch(/; Path=\/dashboard/);
      expect(setCookie).not.toContain(TOKEN);
      const page = await send(d.url, '/dashboard', { method: 'GET', headers: { accept: 'text/html', cookie } });
      expect(page.status).toBe(200);
      expect(page.text).toContain('Overview');

      // A tampered session is no session.
      const tampered = cookie.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A'));
      expect((await send(d.url, '/dashboard', { method: 'GET', headers: { cookie: tampered } })).status).toBe(401);

      // The wrong token: 401 and the form again, no cookie.
      const form = await send(d.url, '/dashboard/login', { method: 'GET', headers: { accept: 'text/html' } });
      const nonce = cookieFrom(form, 'mailroom_login');
      const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)![1]!;
      const wrong = await send(d.url, '/dashboard/login', {
        headers: { ...FORM, accept: 'text/html', cookie: `mailroom_login=${nonce}` },
        body: new URLSearchParams({ csrf, token: 'not-the-token' }).toString(),
      });
      expect(wrong.status).toBe(401);
      expect(String(wrong.headers['set-cookie'] ?? '')).not.toContain('mailroom_session=');
      // The right token without the form's CSRF pair (a login forged by another site): refused.
      const forged = await send(d.url, '/dashboard/login', { headers: { ...FORM, accept: 'text/html' }, body: `token=${TOKEN}` });
      expect(forged.status).toBe(403);
      expect(String(forged.headers['set-cookie'] ?? '')).not.toContain('mailroom_session=');
      // Login never sends anyone to another site.
      const { response: elsewhere } = await (async () => {
        const again = await send(d.url, '/dashboard/login', { method: 'GET', headers: { accept: 'text/html' } });
        const body = new URLSearchParams({ csrf: /name="csrf" value="([^"]+)"/.exec(again.text)![1]!, token: TOKEN, next: '//evil.example/dashboard' });
        return { response: await send(d.url, '/dashboard/login', { headers: { ...FORM, cookie: `mailroom_login=${cookieFrom(again, 'mailroom_login')}` }, body: body.toString() }) };
      })();
      expect(elsewhere.headers.location).toBe('/dashboard');
    }));

  it.skipIf(!harness.isAvailable)('throttles wrong tokens per address, refusing even the right one unchecked, and keeps a logged-in session working', () =>
    withDashboard(harness, async (d) => {
      const { cookie } = await logIn(d.url);
      for (let i = 0; i < 6; i++) expect((await send(d.url, '/dashboard/jobs', { method: 'GET', headers: { authorization: `Bearer wrong-${i}` } })).status).toBe(401);
      const loginWith = async (token: string) => {
        const form = await send(d.url, '/dashboard/login', { method: 'GET', headers: { accept: 'text/html' } });
        const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)![1]!;
        return send(d.url, '/dashboard/login', {
          headers: { ...FORM, accept: 'application/json', cookie: `mailroom_login=${cookieFrom(form, 'mailroom_login')}` },
          body: new URLSearchParams({ csrf, token }).toString(),
        });
      };
      for (let i = 0; i < 4; i++) expect((await loginWith(`wrong-login-${i}`)).status).toBe(401);
      // 10 wrong tokens, by either way in: the right one is now refused too, unchecked.
      for (const attempt of [() => loginWith(TOKEN), () => send(d.url, '/dashboard/jobs', { method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } })]) {
        const refused = await attempt();
        expect(refused.status).toBe(429);
        expect(refused.json.error.code).toBe('MR_ERR_LOGIN_THROTTLED');
        expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
        expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
        expect(String(refused.headers['set-cookie'] ?? '')).not.toContain('mailroom_session=');
      }
      expect((await send(d.url, '/dashboard/jobs', { method: 'GET', headers: { accept: 'text/html', cookie } })).status).toBe(200);
      // The overview typed with a trailing slash is the overview.
      const slash = await send(d.url, '/dashboard/', { method: 'GET', headers: { accept: 'text/html', cookie } });
      expect(slash.status).toBe(303);
      expect(slash.headers.location).toBe('/dashboard');
    }));

  it.skipIf(!harness.isAvailable)('changes nothing on a POST without the CSRF token, with a wrong one, or from another origin', () =>
    withDashboard(harness, async (d) => {
      const { cookie } = await logIn(d.url);
      const csrf = await csrfOf(d.url, cookie, `/dashboard/jobs/${d.pendingJobId}`);
      const attempts: Array<Record<string, string>> = [
        {},
        { csrf: 'forged' },
        { csrf: `${csrf.slice(0, -1)}${csrf.endsWith('A') ? 'B' : 'A'}` },
      ];
      for (const extra of attempts) {
        const answer = await send(d.url, '/dashboard/actions/cancel', {
          headers: { ...FORM, cookie },
          body: new URLSearchParams({ id: d.pendingJobId, ...extra }).toString(),
        });
        expect(answer.status).toBe(403);
        expect(answer.json.error.code).toBe('MR_ERR_CSRF_INVALID');
      }
      // The right token, but the browser says another site's page sent it.
      const foreign: Array<Record<string, string>> = [{ 'sec-fetch-site': 'cross-site' }, { 'sec-fetch-site': 'same-site' }, { origin: 'http://evil.example' }];
      for (const headers of foreign) {
        const answer = await send(d.url, '/dashboard/actions/cancel', {
          headers: { ...FORM, cookie, ...headers },
          body: new URLSearchParams({ id: d.pendingJobId, csrf }).toString(),
        });
        expect(answer.status).toBe(403);
      }
      expect((await d.mr.getJob(d.pendingJobId))!.status).toBe('pending');

      // With everything right, the action happens.
      const done = await send(d.url, '/dashboard/actions/cancel', {
        headers: { ...FORM, accept: 'text/html', cookie, 'sec-fetch-site': 'same-origin' },
        body: new URLSearchParams({ id: d.pendingJobId, csrf, reason: 'not needed' }).toString(),
      });
      expect(done.status).toBe(303);
      expect((await d.mr.getJob(d.pendingJobId))!.deadReason).toBe('cancelled');
    }));

  it.skipIf(!harness.isAvailable)('serves scripts with a bearer token, escapes stored text and hides secret-looking headers', () =>
    withDashboard(harness, async (d) => {
      const bearer = { authorization: `Bearer ${TOKEN}`, accept: 'text/html' };
      const job = await send(d.url, `/dashboard/jobs/${d.deadJobId}`, { method: 'GET', headers: bearer });
      expect(job.status).toBe(200);
      expect(job.text).toContain('SMTP 554: mailbox unavailable for &lt;b>ops@example.com&lt;/b>');
      expect(job.text).not.toContain('<b>ops@example.com</b>');
      expect(job.text).not.toContain(SECRET_HEADER_VALUE);
      expect(job.headers['content-security-policy']).toContain("script-src 'self'");
      // Ingress no longer stores a secret-looking header; a row stored before that may hold
      // one, and the page names it without its value.
      const older = await d.mr.store.eventInsertWithJobs({
        event: { source: 'shop', deliveryId: 'evt_older', type: 'order.paid', headers: { 'x-internal-token': SECRET_HEADER_VALUE }, rawBody: Buffer.from('{}') },
        jobs: [],
      });
      const olderPage = await send(d.url, `/dashboard/events/${older.event.id}`, { method: 'GET', headers: bearer });
      expect(olderPage.text).toContain('x-internal-token');
      expect(olderPage.text).not.toContain(SECRET_HEADER_VALUE);
      // Terminal controls and bidi overrides in stored text are written out, as the CLI does.
      const controls = await d.mr.store.eventInsertWithJobs({
        event: { source: 'shop', deliveryId: 'evt_controls', type: 'order.\u001b[31mpaid\u202e', headers: { 'x-note': 'a\u001b]0;title\u0007b' }, rawBody: Buffer.from('{}') },
        jobs: [],
      });
      const controlsPage = await send(d.url, `/dashboard/events/${controls.event.id}`, { method: 'GET', headers: bearer });
      expect(controlsPage.status).toBe(200);
      expect(controlsPage.text).toContain('order.\\u001b[31mpaid\\u202e');
      expect(controlsPage.text).toContain('a\\u001b]0;title\\u0007b');
      expect(controlsPage.text).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u202a-\u202e]/);
      const event = await send(d.url, `/dashboard/events/${d.eventId}`, { method: 'GET', headers: bearer });
      expect(event.text).not.toContain(BODY_MARKUP);
      expect(event.text).toContain('&lt;img src=x onerror=alert(1)>');
      expect(event.text).not.toContain(SECRET_HEADER_VALUE);
      const search = await send(d.url, '/dashboard/jobs?error=MAILBOX%20unavailable', { method: 'GET', headers: bearer });
      expect(search.text).toContain(`/dashboard/jobs/${d.deadJobId}`);
      // A status outside the allow-list is refused, not passed on.
      expect((await send(d.url, "/dashboard/jobs?status=dead'--", { method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(400);
      // A script replays with the bearer token alone (no CSRF: no browser sends it on its own).
      d.fix();
      const replayed = await send(d.url, '/dashboard/actions/replay', {
        headers: { ...FORM, authorization: `Bearer ${TOKEN}` },
        body: new URLSearchParams({ id: d.deadJobId, reason: 'fixed SMTP', confirm: 'yes' }).toString(),
      });
      expect(replayed.status).toBe(200);
      expect(replayed.json).toEqual({ count: 1, ids: [d.deadJobId] });
      expect(DEAD_ERROR).toContain('SMTP');
    }));
});
