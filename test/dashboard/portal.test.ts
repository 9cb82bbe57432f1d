// The tenant portal over real HTTP, on both stores: a signed link opens one tenant's
// endpoints, deliveries and attempts and nothing else; another tenant's ids answer as ids
// nobody has (404); expired, altered and foreign links get 401 with no data and no cookie;
// posts need the session's CSRF token; adding an endpoint shows its secret once and refuses
// a URL the SSRF guard blocks; a failed delivery re-sent arrives, verified. Also the
// operator's endpoints page: health, disable and recover, behind the dashboard's login.

import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { GONE_REASON } from '../../src/core/disable-reasons.js';
import { PortalApi } from '../../src/portal/portal-api.js';
import { PortalSigner } from '../../src/portal/portal-signer.js';
import { logSink } from '../harness/log-sink.js';
import type { LogSink } from '../harness/log-sink.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';
import { send } from '../ingress/ingress-kit.js';
import type { RawResponse } from '../ingress/ingress-kit.js';
import { answer, closeOutgoingMailrooms } from '../outgoing/outgoing-kit.js';
import { TOKEN } from './dashboard-kit.js';
import { PORTAL_SECRET, REFUSAL_EXCERPT, servePortal } from './portal-kit.js';
import type { ServedPortal } from './portal-kit.js';

const HTML = { accept: 'text/html' };
const FORM = { 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' };

/** Opens `link` as a browser would; returns the portal session cookie it set. */
async function enter(link: string): Promise<string> {
  const url = new URL(link);
  const answer = await send(url.origin, url.pathname, { method: 'GET', headers: HTML });
  expect(answer.status).toBe(303);
  expect(answer.headers.location).toBe('/portal');
  const line = ([] as string[]).concat(answer.headers['set-cookie'] ?? []).find((c) => c.startsWith('mailroom_portal='));
  expect(line).toMatch(/; Path=\/portal; Max-Age=\d+; HttpOnly; SameSite=Lax/);
  return line!.split(';')[0]!;
}

async function page(p: ServedPortal, cookie: string, path: string): Promise<RawResponse> {
  return send(p.url, path, { method: 'GET', headers: { ...HTML, cookie } });
}

async function csrfOf(p: ServedPortal, cookie: string): Promise<string> {
  return /name="csrf" value="([^"]+)"/.exec((await page(p, cookie, '/portal')).text)![1]!;
}

function post(p: ServedPortal, cookie: string, action: string, fields: Record<string, string>, headers: Record<string, string> = {}): Promise<RawResponse> {
  return send(p.url, `/portal/actions/${action}`, { headers: { ...FORM, cookie, ...headers }, body: new URLSearchParams(fields).toString() });
}

/** Nothing of globex, and no signing secret, in what acme's session was shown. */
function expectNothingForeign(p: ServedPortal, text: string, where: string): void {
  expect(text, where).not.toContain('globex');
  expect(text, where).not.toContain(p.globex.receiver.url);
  expect(text, where).not.toContain(p.globex.secret);
  expect(text, where).not.toContain(p.acme.secret);
}

describe.each(storeHarnesses)('the tenant portal on $name', (harness) => {
  let served: ServedPortal | null = null;
  afterEach(async () => {
    await served?.close();
    served = null;
    await closeOutgoingMailrooms(harness);
  });

  async function serve(options: { log?: LogSink; tenantAllowlist?: string[] } = {}): Promise<ServedPortal> {
    served = await servePortal(harness, options);
    return served;
  }

  it.skipIf(!harness.isAvailable)("opens one tenant's endpoints, deliveries and attempts from a signed link, and nothing of another's", async () => {
    const p = await serve();
    const link = await p.mr.portal.link('acme', { ttlMs: 60_000 });
    expect(link.startsWith(`${p.url}/portal/enter/`)).toBe(true);
    const cookie = await enter(link);

    const home = await page(p, cookie, '/portal');
    expect(home.status).toBe(200);
    expect((await page(p, cookie, '/portal/')).headers.location).toBe('/portal');
    expect(home.text).toContain(p.acme.receiver.url);
    expectNothingForeign(p, home.text, 'home');

    const endpoint = await page(p, cookie, `/portal/endpoints/${p.acme.endpoint.id}`);
    expect(endpoint.status).toBe(200);
    expect(endpoint.text).toContain(`/portal/endpoints/${p.acme.endpoint.id}/deliveries/${p.acme.failedDeliveryId}`);
    expect(endpoint.text).toMatch(/delivery-failed">failed/);
    expectNothingForeign(p, endpoint.text, 'endpoint');

    // The attempt: HTTP status, duration and the response excerpt, escaped.
    const delivery = await page(p, cookie, `/portal/endpoints/${p.acme.endpoint.id}/deliveries/${p.acme.failedDeliveryId}`);
    expect(delivery.status).toBe(200);
    expect(delivery.text).toMatch(/<td class="num">400<\/td><td class="num">\d+ ms<\/td>/);
    expect(delivery.text).toContain('unknown customer &lt;script>x&lt;/script>');
    expect(delivery.text).not.toContain(REFUSAL_EXCERPT);
    expect(delivery.text).toContain('Re-send');
    expectNothingForeign(p, delivery.text, 'delivery');
  });

  it.skipIf(!harness.isAvailable)("answers another tenant's endpoint and delivery ids exactly as ids nobody has: 404, no data", async () => {
    const p = await serve();
    const cookie = await enter(await p.mr.portal.link('acme'));
    const csrf = await csrfOf(p, cookie);
    const reads = [
      `/portal/endpoints/${p.globex.endpoint.id}`,
      `/portal/endpoints/${p.globex.endpoint.id}/deliveries/${p.globex.deliveryId}`,
      `/portal/endpoints/${p.acme.endpoint.id}/deliveries/${p.globex.deliveryId}`,
      '/portal/endpoints/999999',
      `/portal/endpoints/${p.acme.endpoint.id}/deliveries/999999`,
      '/portal/endpoints/x%27%20OR%201=1',
    ];
    for (const path of reads) {
      const answer = await page(p, cookie, path);
      expect(answer.status, path).toBe(404);
      expectNothingForeign(p, answer.text, path);
      expect(answer.text, path).not.toContain(REFUSAL_EXCERPT.slice(0, 10));
      // A delivery id says what was not found, the same words for a foreign id as for none.
      if (path.startsWith(`/portal/endpoints/${p.acme.endpoint.id}/deliveries/`)) expect(answer.text, path).toContain('No delivery with that id on this endpoint.');
    }
    const writes: Array<[string, Record<string, string>]> = [
      ['disable', { id: p.globex.endpoint.id }],
      ['enable', { id: p.globex.endpoint.id }],
      ['resend', { endpoint: p.globex.endpoint.id, id: p.globex.deliveryId }],
      ['resend', { endpoint: p.acme.endpoint.id, id: p.globex.deliveryId }],
    ];
    for (const [action, fields] of writes) {
      const answer = await post(p, cookie, action, { ...fields, csrf });
      expect(answer.status, action).toBe(404);
      expectNothingForeign(p, answer.text, action);
    }
    expect((await p.mr.endpoints.get(p.globex.endpoint.id))!.enabled).toBe(true);
    expect((await p.mr.deliveries.list({ endpointId: p.globex.endpoint.id }))[0]!.attempts).toBe(1);

    // No operator page: the portal's cookie is not a dashboard credential.
    for (const path of ['/dashboard', '/dashboard/endpoints', `/dashboard/jobs`]) {
      const answer = await send(p.url, path, { method: 'GET', headers: { accept: 'application/json', cookie } });
      expect(answer.status, path).toBe(401);
    }
  });

  it.skipIf(!harness.isAvailable)('refuses an expired, altered or foreign link with 401, no data and no cookie, and never logs a link', async () => {
    const log = logSink();
    const p = await serve({ log });
    const signer = new PortalSigner(PORTAL_SECRET);
    const valid = new URL(await p.mr.portal.link('acme')).pathname.split('/').pop()!;
    const [, expiry, signature] = valid.split('.');
    const globexName = Buffer.from('globex').toString('base64url');
    const tokens = {
      expired: signer.linkToken('acme', Date.now() - 1_000),
      'tenant swapped': `${globexName}.${expiry}.${signature}`,
      'expiry extended': `${valid.split('.')[0]}.${Number(expiry) + 86_400_000}.${signature}`,
      'other secret': new PortalSigner('another-secret-0123456789abcdef0123456').linkToken('acme', Date.now() + 60_000),
      garbage: 'not-a-token',
      // A session cookie's value is not a link (signed under another label).
      'session as link': signer.newSession({ tenant: 'acme', expiresAtMs: Date.now() + 60_000 }),
    };
    for (const [what, token] of Object.entries(tokens)) {
      const answer = await send(p.url, `/portal/enter/${token}`, { method: 'GET', headers: HTML });
      expect(answer.status, what).toBe(401);
      expect(answer.headers['set-cookie'], what).toBeUndefined();
      expect(answer.text, what).toContain('invalid or has expired');
      expect(answer.text, what).not.toContain('acme');
      expectNothingForeign(p, answer.text, what);
    }
    // Without a session, or with an expired or altered one, every portal page is refused.
    const expiredSession = signer.newSession({ tenant: 'acme', expiresAtMs: Date.now() - 1 });
    const linkAsSession = signer.linkToken('acme', Date.now() + 60_000);
    for (const cookie of ['', `mailroom_portal=${expiredSession}`, `mailroom_portal=${linkAsSession}`]) {
      for (const path of ['/portal', `/portal/endpoints/${p.acme.endpoint.id}`]) {
        const answer = await send(p.url, path, { method: 'GET', headers: { ...HTML, cookie } });
        expect(answer.status, `${path} with "${cookie.slice(0, 30)}"`).toBe(401);
        expect(answer.text).not.toContain(p.acme.receiver.url);
      }
      const write = await post(p, cookie, 'disable', { id: p.acme.endpoint.id });
      expect(write.status).toBe(401);
    }
    expect((await p.mr.endpoints.get(p.acme.endpoint.id))!.enabled).toBe(true);
    // A link posted to (405, which the server logs) or opened is never written to the log.
    expect((await send(p.url, `/portal/enter/${valid}`, { method: 'POST', headers: FORM, body: '' })).status).toBe(405);
    expect((await send(p.url, `/portal/enter/${valid}`, { method: 'GET', headers: HTML })).status).toBe(303);
    expect(log.text()).toContain('request refused');
    expect(log.text()).not.toContain(signature!);
    expect(log.text()).not.toContain(PORTAL_SECRET);
  });

  it.skipIf(!harness.isAvailable)("takes a post only with the session's CSRF token from the same origin", async () => {
    const p = await serve();
    const cookie = await enter(await p.mr.portal.link('acme'));
    const csrf = await csrfOf(p, cookie);
    const id = p.acme.endpoint.id;
    expect((await post(p, cookie, 'disable', { id })).status).toBe(403);
    expect((await post(p, cookie, 'disable', { id, csrf: `${csrf}x` })).status).toBe(403);
    expect((await post(p, cookie, 'disable', { id, csrf }, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await post(p, cookie, 'disable', { id, csrf }, { origin: 'http://evil.example' })).status).toBe(403);
    // Another session's token does not fit this one.
    const other = await enter(await p.mr.portal.link('acme'));
    expect((await post(p, cookie, 'disable', { id, csrf: await csrfOf(p, other) })).status).toBe(403);
    expect((await p.mr.endpoints.get(id))!.enabled).toBe(true);

    const done = await post(p, cookie, 'disable', { id, csrf });
    expect(done.status).toBe(303);
    expect(done.headers.location).toBe(`/portal/endpoints/${id}?done=disabled`);
    const disabled = (await p.mr.endpoints.get(id))!;
    expect(disabled.enabled).toBe(false);
    expect(disabled.disabledReason).toBe('disabled by the tenant in the portal');
    expect((await page(p, cookie, `/portal/endpoints/${id}`)).text).toContain('Enable');
    expect((await post(p, cookie, 'enable', { id, csrf })).status).toBe(303);
    expect((await p.mr.endpoints.get(id))!.enabled).toBe(true);
  });

  it.skipIf(!harness.isAvailable)('asks before a link for another tenant replaces a session, and signs in at once for the same tenant or without a session', async () => {
    const p = await serve();
    const acme = await enter(await p.mr.portal.link('acme'));
    const globexLink = new URL(await p.mr.portal.link('globex'));

    // Signed in as acme, a link for globex (one globex forwarded, say) only asks.
    const asked = await send(p.url, globexLink.pathname, { method: 'GET', headers: { ...HTML, cookie: acme } });
    expect(asked.status).toBe(200);
    expect(asked.headers['set-cookie']).toBeUndefined();
    expect(asked.text).toMatch(/signed in to the portal as <strong>acme<\/strong>.*link you opened is for <strong>globex<\/strong>/s);
    expect(asked.text).toContain('<form method="post" action="/portal/actions/switch"');
    expect(asked.text).toContain(`name="csrf" value="${await csrfOf(p, acme)}"`);
    expect(asked.text).toContain('<a href="/portal">Stay signed in as acme</a>');
    // The page's address is the link: its requests name only the origin as referrer, by header
    // and by the meta tag that would override it (not no-referrer: its posts carry Origin: null).
    expect(asked.headers['referrer-policy']).toBe('strict-origin');
    expect(asked.text).toContain('<meta name="referrer" content="strict-origin"/>');
    expect(asked.text).not.toContain('same-origin');
    expect(asked.text).not.toContain(p.globex.receiver.url);
    expect((await send(p.url, globexLink.pathname, { method: 'HEAD', headers: { ...HTML, cookie: acme } })).headers['set-cookie']).toBeUndefined();
    // acme's session is untouched.
    const home = await page(p, acme, '/portal');
    expect(home.status).toBe(200);
    expect(home.text).toContain(p.acme.receiver.url);
    expectNothingForeign(p, home.text, 'acme home after the globex link');

    // The same tenant's link, no session, or an expired one: a new session at once, as before.
    const signer = new PortalSigner(PORTAL_SECRET);
    const expiredAcme = `mailroom_portal=${signer.newSession({ tenant: 'acme', expiresAtMs: Date.now() - 1 })}`;
    for (const [what, cookie, link] of [
      ['same tenant', acme, new URL(await p.mr.portal.link('acme'))],
      ['no session', '', globexLink],
      ['expired session', expiredAcme, globexLink],
    ] as const) {
      const entered = await send(p.url, link.pathname, { method: 'GET', headers: { ...HTML, cookie } });
      expect(entered.status, what).toBe(303);
      expect(entered.headers.location, what).toBe('/portal');
      expect(String(entered.headers['set-cookie']), what).toMatch(/^mailroom_portal=[^;]+; Path=\/portal; Max-Age=\d+; HttpOnly; SameSite=Lax/);
    }
  });

  it.skipIf(!harness.isAvailable)("switches to the link's tenant on a same-origin post with the current session's CSRF token", async () => {
    const log = logSink();
    const p = await serve({ log });
    const acme = await enter(await p.mr.portal.link('acme'));
    const token = new URL(await p.mr.portal.link('globex')).pathname.split('/').pop()!;
    const asked = await send(p.url, `/portal/enter/${token}`, { method: 'GET', headers: { ...HTML, cookie: acme } });
    const csrf = /name="csrf" value="([^"]+)"/.exec(asked.text)![1]!;
    expect(asked.text).toContain(`name="link" value="${token}"`);

    const switched = await post(p, acme, 'switch', { csrf, link: token }, { 'sec-fetch-site': 'same-origin', origin: p.url });
    expect(switched.status).toBe(303);
    expect(switched.headers.location).toBe('/portal');
    const line = ([] as string[]).concat(switched.headers['set-cookie'] ?? []).find((c) => c.startsWith('mailroom_portal='));
    expect(line).toMatch(/; Path=\/portal; Max-Age=\d+; HttpOnly; SameSite=Lax/);
    const globex = line!.split(';')[0]!;
    const home = await page(p, globex, '/portal');
    expect(home.status).toBe(200);
    expect(home.text).toContain(p.globex.receiver.url);
    expect(home.text).toContain('<span class="muted tenant">globex</span>');
    expect(home.text).not.toContain(p.acme.receiver.url);
    expect(log.text()).toContain('portal session switched to another tenant');
    expect(log.text()).not.toContain(token.split('.').pop()!);
  });

  it.skipIf(!harness.isAvailable)('refuses a switch without the CSRF token, from another site, or with a bad link, and keeps the session', async () => {
    const p = await serve();
    const acme = await enter(await p.mr.portal.link('acme'));
    const csrf = await csrfOf(p, acme);
    const token = new URL(await p.mr.portal.link('globex')).pathname.split('/').pop()!;
    const other = await enter(await p.mr.portal.link('acme'));
    const refusals: Array<[string, string, Record<string, string>, Record<string, string>, number]> = [
      ['no csrf', acme, { link: token }, {}, 403],
      ['wrong csrf', acme, { link: token, csrf: `${csrf}x` }, {}, 403],
      ["another session's csrf", acme, { link: token, csrf: await csrfOf(p, other) }, {}, 403],
      ['cross-site', acme, { link: token, csrf }, { 'sec-fetch-site': 'cross-site' }, 403],
      ['other origin', acme, { link: token, csrf }, { origin: 'http://evil.example' }, 403],
      ['no session', '', { link: token, csrf }, {}, 401],
      ['no link', acme, { csrf }, {}, 400],
      ['altered link', acme, { link: `${token}x`, csrf }, {}, 401],
    ];
    for (const [what, cookie, fields, headers, status] of refusals) {
      const answer = await post(p, cookie, 'switch', fields, headers);
      expect(answer.status, what).toBe(status);
      expect(answer.headers['set-cookie'], what).toBeUndefined();
      expect(answer.text, what).not.toContain(p.globex.receiver.url);
    }
    const home = await page(p, acme, '/portal');
    expect(home.text).toContain(p.acme.receiver.url);
    expectNothingForeign(p, home.text, 'acme home after refused switches');
    // The control: the same post, genuine, is taken, so each refusal above was for what it lacked.
    const switched = await post(p, acme, 'switch', { link: token, csrf }, { 'sec-fetch-site': 'same-origin' });
    expect(switched.status).toBe(303);
    expect(String(switched.headers['set-cookie'])).toMatch(/^mailroom_portal=/);
  });

  it.skipIf(!harness.isAvailable)("keeps an endpoint the operator disabled disabled, and the operator's reason to the operator", async () => {
    const p = await serve();
    const cookie = await enter(await p.mr.portal.link('acme'));
    const csrf = await csrfOf(p, cookie);
    const id = p.acme.endpoint.id;
    const operatorReason = 'invoice 4411 unpaid, ask Bob before enabling';
    await p.mr.endpoints.disable(id, operatorReason);
    for (const path of ['/portal', `/portal/endpoints/${id}`, `/portal/endpoints/${id}/deliveries/${p.acme.failedDeliveryId}`]) {
      const shown = (await page(p, cookie, path)).text;
      expect(shown, path).not.toContain('4411');
      expect(shown, path).not.toContain('/portal/actions/enable');
      if (!path.includes('deliveries')) expect(shown, path).toContain('disabled by your provider');
    }
    const enable = await post(p, cookie, 'enable', { id, csrf });
    expect(enable.status).toBe(403);
    expect(enable.text).toContain('ask them to enable it again');
    const recover = await post(p, cookie, 'recover', { id, csrf, since: '2026-01-01T00:00' });
    expect(recover.status).toBe(403);
    expect(recover.text).toContain('ask them to enable it again');
    // Disabling it again from the portal changes nothing: the tenant's reason would carry the right to enable.
    // Its JSON answer, like the pages, leaves out what is the operator's: metadata, rate limit, adder.
    await p.mr.endpoints.update(id, { metadata: { billing: 'cus_4411' }, rateLimit: { limit: 100, intervalMs: 60_000 } });
    const disable = await send(p.url, '/portal/actions/disable', { headers: { ...FORM, accept: 'application/json', cookie }, body: new URLSearchParams({ id, csrf }).toString() });
    expect(disable.status).toBe(200);
    expect(JSON.parse(disable.text)).toMatchObject({ id, enabled: false, disabledReason: 'disabled by your provider' });
    expect(Object.keys(JSON.parse(disable.text)).filter((key) => ['metadata', 'rateLimit', 'addedBy'].includes(key))).toEqual([]);
    expect(disable.text).not.toContain('4411');
    expect(await p.mr.endpoints.get(id)).toMatchObject({ enabled: false, disabledReason: operatorReason });
    // Nor can the tenant add the same URL again as a new endpoint; another URL is theirs to add.
    const before = (await p.mr.endpoints.list({ tenant: 'acme' })).length;
    const again = await post(p, cookie, 'add-endpoint', { url: (await p.mr.endpoints.get(id))!.url, csrf });
    expect(again.status).toBe(403);
    expect(again.text).toContain('which your provider disabled');
    expect(again.text).not.toContain('4411');
    expect((await p.mr.endpoints.list({ tenant: 'acme' })).length).toBe(before);
    await expect(p.mr.endpoints.addByTenant({ tenant: 'acme', url: (await p.mr.endpoints.get(id))!.url })).rejects.toMatchObject({ code: 'MR_ERR_ENDPOINT_DISABLED' });
    expect((await post(p, cookie, 'add-endpoint', { url: `${p.acme.receiver.url}/elsewhere`, csrf })).status).toBe(201);

    // An operator's reason that reads like Mailroom's own is still the operator's.
    await p.mr.endpoints.disable(id, GONE_REASON);
    expect((await post(p, cookie, 'enable', { id, csrf })).status).toBe(403);

    // What the tenant disabled, the operator can take over by disabling it again without a reason.
    await p.mr.endpoints.enable(id);
    expect((await post(p, cookie, 'disable', { id, csrf })).status).toBe(303);
    expect(await p.mr.endpoints.get(id)).toMatchObject({ enabled: false, disabledBy: 'tenant' });
    await p.mr.endpoints.disable(id);
    expect(await p.mr.endpoints.get(id)).toMatchObject({ enabled: false, disabledBy: 'operator', disabledReason: 'disabled by the tenant in the portal' });
    expect((await post(p, cookie, 'enable', { id, csrf })).status).toBe(403);

    // What the deliveries disabled (a 410 from the tenant's receiver) the tenant may enable, seeing why.
    await p.mr.endpoints.enable(id);
    p.acme.receiver.respond = answer(410, { 'content-type': 'text/plain' }, 'gone');
    await p.mr.publish('invoice.paid', { invoice: 'in_acme_gone' }, { tenant: 'acme' });
    await waitFor(async () => (await p.mr.endpoints.get(id))!.disabledBy === 'deliveries', { timeoutMs: 10_000, description: "the 410 to disable acme's endpoint" });
    expect((await page(p, cookie, `/portal/endpoints/${id}`)).text).toContain(GONE_REASON);
    expect((await post(p, cookie, 'enable', { id, csrf })).status).toBe(303);
    expect(await p.mr.endpoints.get(id)).toMatchObject({ enabled: true, disabledBy: null, disabledReason: null });
  });

  it.skipIf(!harness.isAvailable)('adds an endpoint and shows its secret once, and says why a blocked URL is refused', async () => {
    const p = await serve();
    const cookie = await enter(await p.mr.portal.link('acme'));
    const csrf = await csrfOf(p, cookie);

    const blocked = await post(p, cookie, 'add-endpoint', { url: 'http://169.254.169.254/latest', csrf });
    expect(blocked.status).toBe(400);
    // Told in the tenant's words: no operator config key, no range or resolved address.
    expect(blocked.text).toContain('Endpoint host 169.254.169.254 is not a public address; deliveries go to public addresses only.');
    expect(blocked.text).not.toContain('allowlist');
    expect(blocked.text).toContain('value="http://169.254.169.254/latest"');
    expect(await p.mr.endpoints.list({ tenant: 'acme' })).toHaveLength(1);

    const added = await post(p, cookie, 'add-endpoint', { url: `${p.acme.receiver.url}/second`, description: 'second <b>one</b>', eventTypes: 'invoice.paid, invoice.voided', csrf });
    expect(added.status).toBe(201);
    expect(added.headers['cache-control']).toBe('no-store');
    const secret = /<pre class="secret">(whsec_[^<]+)<\/pre>/.exec(added.text)![1]!;
    const endpoints = await p.mr.endpoints.list({ tenant: 'acme' });
    expect(endpoints).toHaveLength(2);
    expect(endpoints[1]).toMatchObject({ tenant: 'acme', description: 'second <b>one</b>', eventTypes: ['invoice.paid', 'invoice.voided'], addedBy: 'tenant' });
    // Shown once: no later page carries it.
    for (const path of ['/portal', `/portal/endpoints/${endpoints[1]!.id}`]) {
      const later = await page(p, cookie, path);
      expect(later.text, path).not.toContain(secret);
      expect(later.text, path).toContain('second &lt;b>one&lt;/b>'.split(' ')[0]!);
    }
    // The secret is the endpoint's real one: a delivery to it verifies with it.
    p.acme.receiver.secrets = [p.acme.secret, secret];
    p.fix();
    await p.mr.publish('invoice.voided', { invoice: 'in_acme_2' }, { tenant: 'acme' });
    await waitFor(() => p.acme.receiver.received.some((r) => r.verifiedWith === secret), { timeoutMs: 10_000, description: 'a delivery signed with the shown secret' });
    // '*' in the event types field is every type, as left empty.
    expect((await post(p, cookie, 'add-endpoint', { url: `${p.acme.receiver.url}/third`, eventTypes: ' * ', csrf })).status).toBe(201);
    expect((await p.mr.endpoints.list({ tenant: 'acme' }))[2]).toMatchObject({ eventTypes: null });
  });

  it.skipIf(!harness.isAvailable)('refuses a tenant an address the operator allowed only for their own endpoints', async () => {
    // The operator's allowlist names loopback (its own endpoints reach it); tenants get none.
    const p = await serve({ tenantAllowlist: [] });
    const cookie = await enter(await p.mr.portal.link('acme'));
    const csrf = await csrfOf(p, cookie);
    const refused = await post(p, cookie, 'add-endpoint', { url: `${p.acme.receiver.url}/internal`, csrf });
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Endpoint host 127.0.0.1 is not a public address; deliveries go to public addresses only.');
    expect(await p.mr.endpoints.list({ tenant: 'acme' })).toHaveLength(1);
  });

  it.skipIf(!harness.isAvailable)('rotates the signing secret, shows the new one once, signs with both, and refuses a second rotation', async () => {
    const p = await serve();
    const cookie = await enter(await p.mr.portal.link('acme'));
    const csrf = await csrfOf(p, cookie);
    const id = p.acme.endpoint.id;
    expect((await page(p, cookie, `/portal/endpoints/${id}`)).text).toContain('Rotate signing secret');
    // Another tenant's endpoint is one nobody has.
    expect((await post(p, cookie, 'rotate-secret', { id: p.globex.endpoint.id, csrf })).status).toBe(404);

    const rotated = await post(p, cookie, 'rotate-secret', { id, csrf });
    expect(rotated.status).toBe(200);
    expect(rotated.headers['cache-control']).toBe('no-store');
    expect(rotated.text).toContain('The old secret keeps signing beside it until');
    const secret = /<pre class="secret">(whsec_[^<]+)<\/pre>/.exec(rotated.text)![1]!;
    expect(secret).not.toBe(p.acme.secret);
    // A refresh of that page posts again: refused, and the secrets stay as they are.
    const again = await post(p, cookie, 'rotate-secret', { id, csrf });
    expect(again.status).toBe(409);
    expect(again.text).toContain('The secret before your last rotation still signs until');
    expect(again.text).not.toContain('overlap');
    expect(again.text).not.toContain('whsec_');
    expect((await page(p, cookie, `/portal/endpoints/${id}`)).text).not.toContain(secret);

    // Both sign: a receiver holding either one verifies the next delivery.
    p.fix();
    await p.mr.publish('invoice.paid', { invoice: 'in_acme_rotated' }, { tenant: 'acme' });
    await waitFor(() => p.acme.receiver.received.some((r) => String(r.body).includes('in_acme_rotated')), { timeoutMs: 10_000, description: 'the delivery after the rotation' });
    const delivered = p.acme.receiver.received.find((r) => String(r.body).includes('in_acme_rotated'))!;
    for (const held of [secret, p.acme.secret]) {
      expect(() => new Webhook(held).verify(delivered.body, delivered.headers as Record<string, string>), held === secret ? 'new' : 'old').not.toThrow();
    }
  });

  it.skipIf(!harness.isAvailable)('adds one endpoint for an add form sent twice or twice at once, and shows its secret only on the first answer', async () => {
    const p = await serve();
    const cookie = await enter(await p.mr.portal.link('acme'));
    const home = (await page(p, cookie, '/portal')).text;
    const csrf = /name="csrf" value="([^"]+)"/.exec(home)![1]!;
    const once = /name="once" value="([^"]+)"/.exec(home)![1]!;
    expect(/name="once" value="([^"]+)"/.exec((await page(p, cookie, '/portal')).text)![1], 'a token per page shown').not.toBe(once);
    const form = { url: `${p.acme.receiver.url}/again`, csrf, once };

    // A refresh of the secret's page sends the same form again.
    const first = await post(p, cookie, 'add-endpoint', form);
    expect(first.status).toBe(201);
    const secret = /<pre class="secret">(whsec_[^<]+)<\/pre>/.exec(first.text)![1]!;
    const again = await post(p, cookie, 'add-endpoint', form);
    expect(again.status).toBe(303);
    const id = (await p.mr.endpoints.list({ tenant: 'acme' }))[1]!.id;
    expect(again.headers.location).toBe(`/portal/endpoints/${id}?done=already-added`);
    expect(again.text).not.toContain(secret);
    const shown = await page(p, cookie, again.headers.location as string);
    expect(shown.text).toContain('sending it again added nothing');
    expect(shown.text).not.toContain(secret);
    expect(await p.mr.endpoints.list({ tenant: 'acme' })).toHaveLength(2);

    // The same token with another URL (the back button, the form restored and changed) is another form.
    const other = await post(p, cookie, 'add-endpoint', { ...form, url: `${p.acme.receiver.url}/other` });
    expect(other.status).toBe(201);
    expect(await p.mr.endpoints.list({ tenant: 'acme' })).toHaveLength(3);

    // A double click: the page's script sends the form once; without it, two sendings of
    // one form in flight together still add one endpoint.
    expect(home).toMatch(/<form[^>]*action="\/portal\/actions\/add-endpoint"[^>]*data-submit-once/);
    const twice = /name="once" value="([^"]+)"/.exec((await page(p, cookie, '/portal')).text)![1]!;
    const both = await Promise.all([1, 2].map(() => post(p, cookie, 'add-endpoint', { url: `${p.acme.receiver.url}/double`, csrf, once: twice })));
    expect(both.map((answer) => answer.status).sort()).toEqual([201, 303]);
    expect((await p.mr.endpoints.list({ tenant: 'acme' })).map((endpoint) => endpoint.url).filter((url) => url.endsWith('/double'))).toHaveLength(1);

    // A refused URL is not remembered: corrected, the same form adds it.
    const retry = /name="once" value="([^"]+)"/.exec((await page(p, cookie, '/portal')).text)![1]!;
    expect((await post(p, cookie, 'add-endpoint', { url: 'http://169.254.169.254/x', csrf, once: retry })).status).toBe(400);
    expect((await post(p, cookie, 'add-endpoint', { url: `${p.acme.receiver.url}/fixed`, csrf, once: retry })).status).toBe(201);
    expect(await p.mr.endpoints.list({ tenant: 'acme' })).toHaveLength(5);
  });

  it.skipIf(!harness.isAvailable)('re-sends a failed delivery, which arrives verified and shows delivered with both attempts', async () => {
    const p = await serve();
    const cookie = await enter(await p.mr.portal.link('acme'));
    const csrf = await csrfOf(p, cookie);
    const path = `/portal/endpoints/${p.acme.endpoint.id}/deliveries/${p.acme.failedDeliveryId}`;
    p.fix();
    const resent = await post(p, cookie, 'resend', { endpoint: p.acme.endpoint.id, id: p.acme.failedDeliveryId, csrf });
    expect(resent.status).toBe(303);
    expect(resent.headers.location).toBe(`${path}?done=resent`);
    await waitFor(async () => (await p.mr.deliveries.list({ endpointId: p.acme.endpoint.id }))[0]!.status === 'delivered', {
      timeoutMs: 10_000,
      description: 'the re-sent delivery to arrive',
    });
    expect(p.acme.receiver.received.at(-1)!.verifiedWith).toBe(p.acme.secret);
    const shown = await page(p, cookie, path);
    expect(shown.text).toMatch(/delivery-delivered">delivered/);
    expect(shown.text).toMatch(/<td class="num">204<\/td>/);
    expect(shown.text).toMatch(/<td class="num">400<\/td>/);
    // The re-send is marked between the attempt that failed and the one that arrived.
    const rows = [...shown.text.matchAll(/<td class="num">(400|204)<\/td>|Re-sent from this portal/g)].map((m) => m[1] ?? 'resent');
    expect(rows).toEqual(['400', 'resent', '204']);
    expect(shown.text).not.toContain('Re-send');
    // A delivered one cannot be re-sent.
    const again = await post(p, cookie, 'resend', { endpoint: p.acme.endpoint.id, id: p.acme.failedDeliveryId, csrf });
    expect(again.status).toBe(400);
  });

  it.skipIf(!harness.isAvailable)('says a delivery is already being re-sent when it is sent again before its next attempt', async () => {
    const p = await serve();
    const cookie = await enter(await p.mr.portal.link('acme'));
    const csrf = await csrfOf(p, cookie);
    const [failed] = await p.mr.deliveries.list({ endpointId: p.acme.endpoint.id });
    // Hold the deliver job in line, as a busy worker would, so the second click finds it pending.
    await p.mr.pauseQueue((await p.mr.getJob(failed!.jobId!))!.queue);
    const form = { endpoint: p.acme.endpoint.id, id: p.acme.failedDeliveryId, csrf };
    expect((await post(p, cookie, 'resend', form)).status).toBe(303);
    // Back in line, it reads pending and counts in the endpoint's backlog, here and in the lists.
    expect((await p.mr.deliveries.list({ endpointId: p.acme.endpoint.id }))[0]).toMatchObject({ id: p.acme.failedDeliveryId, status: 'pending' });
    expect((await p.mr.endpoints.health(p.acme.endpoint.id))!.backlog).toBe(1);
    expect((await page(p, cookie, `/portal/endpoints/${p.acme.endpoint.id}`)).text).toMatch(/delivery-pending">pending/);
    const again = await post(p, cookie, 'resend', form);
    expect(again.status).toBe(409);
    expect(again.text).toContain(`Delivery ${p.acme.failedDeliveryId} is already being re-sent.`);
    // A delivery on its first run is not being re-sent, and only a failed one can be.
    const fresh = await p.mr.publish('invoice.paid', { n: 1 }, { tenant: 'acme' });
    const firstRun = await post(p, cookie, 'resend', { ...form, id: fresh.deliveries[0]!.id });
    expect(firstRun.status).toBe(400);
    expect(firstRun.text).toContain(`Delivery ${fresh.deliveries[0]!.id} is pending; only a failed delivery can be re-sent.`);
    expect(again.text).not.toMatch(/retryNow|Job \d+/);
  });

  it.skipIf(!harness.isAvailable)('re-sends what was skipped while the tenant had disabled the endpoint, once enabled again', async () => {
    const p = await serve();
    const cookie = await enter(await p.mr.portal.link('acme'));
    const csrf = await csrfOf(p, cookie);
    const id = p.acme.endpoint.id;
    p.fix();
    expect((await post(p, cookie, 'disable', { id, csrf })).status).toBe(303);
    const skipped = await p.mr.publish('invoice.paid', { invoice: 'in_acme_skipped' }, { tenant: 'acme' });
    expect(skipped.deliveries[0]!.status).toBe('skipped');
    // Disabled: recovering is refused, and nothing is sent.
    const refused = await post(p, cookie, 'recover', { id, since: '2000-01-01T00:00', csrf });
    expect(refused.status).toBe(409);
    expect(await post(p, cookie, 'recover', { id: p.globex.endpoint.id, since: '2000-01-01T00:00', csrf }).then((r) => r.status)).toBe(404);
    expect((await post(p, cookie, 'enable', { id, csrf })).status).toBe(303);
    const receivedBefore = p.acme.receiver.received.length;
    const recovered = await post(p, cookie, 'recover', { id, since: '2000-01-01T00:00', csrf });
    expect(recovered.status).toBe(303);
    // The failed delivery from the start and the skipped one.
    expect(recovered.headers.location).toBe(`/portal/endpoints/${id}?done=recovered&count=2`);
    expect((await page(p, cookie, recovered.headers.location as string)).text).toContain('Re-sending 2 deliveries.');
    await waitFor(async () => (await p.mr.deliveries.list({ endpointId: id })).every((d) => d.status === 'delivered'), {
      timeoutMs: 10_000,
      description: 'both recovered deliveries to arrive',
    });
    const resent = p.acme.receiver.received.slice(receivedBefore);
    expect(resent.map((r) => r.verifiedWith)).toEqual([p.acme.secret, p.acme.secret]);
  });

  it.skipIf(!harness.isAvailable)("shows the operator every endpoint's health behind the dashboard login, and disables and recovers from it", async () => {
    const p = await serve();
    const bearer = { authorization: `Bearer ${TOKEN}`, accept: 'text/html' };
    for (const accept of ['text/html', 'application/json']) {
      const refused = await send(p.url, '/dashboard/endpoints', { method: 'GET', headers: { accept } });
      expect(refused.status).toBe(accept === 'text/html' ? 303 : 401);
      expect(refused.text).not.toContain('acme');
    }
    const list = await send(p.url, '/dashboard/endpoints', { method: 'GET', headers: bearer });
    expect(list.status).toBe(200);
    expect(list.text).toContain(p.acme.receiver.url);
    expect(list.text).toContain(p.globex.receiver.url);
    const row = (id: string) => new RegExp(`<tr data-endpoint="${id}">(.*?)</tr>`, 's').exec(list.text)![1]!;
    expect(row(p.acme.endpoint.id)).toContain('<td class="num">0.0%</td>');
    expect(row(p.globex.endpoint.id)).toContain('<td class="num">100.0%</td>');
    expect(row(p.globex.endpoint.id)).toContain('breaker-closed');
    expect(list.text).not.toContain(p.acme.secret);
    expect(list.text).not.toContain(p.globex.secret);
    expect(list.text).not.toContain('whsec_');

    const form = { ...bearer, 'content-type': 'application/x-www-form-urlencoded' };
    const disabled = await send(p.url, '/dashboard/actions/endpoint-disable', { headers: form, body: `id=${p.acme.endpoint.id}&reason=${encodeURIComponent('receiver broken, customer told')}` });
    expect(disabled.status).toBe(303);
    expect((await p.mr.endpoints.get(p.acme.endpoint.id))).toMatchObject({ enabled: false, disabledReason: 'receiver broken, customer told' });
    const afterDisable = await send(p.url, disabled.headers.location as string, { method: 'GET', headers: bearer });
    expect(afterDisable.text).toContain('receiver broken, customer told');

    await send(p.url, '/dashboard/actions/endpoint-enable', { headers: form, body: `id=${p.acme.endpoint.id}` });
    p.fix();
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const recovered = await send(p.url, '/dashboard/actions/endpoint-recover', { headers: form, body: `id=${p.acme.endpoint.id}&since=${encodeURIComponent(since)}` });
    expect(recovered.status).toBe(303);
    expect(recovered.headers.location).toContain('count=1');
    await waitFor(async () => (await p.mr.deliveries.list({ endpointId: p.acme.endpoint.id }))[0]!.status === 'delivered', {
      timeoutMs: 10_000,
      description: 'the recovered delivery to arrive',
    });
  });
});

describe('mr.portal.link', () => {
  it('refuses without a secret, with a short one, and with a ttl out of range', async () => {
    await expect(new PortalApi({}).link('acme')).rejects.toMatchObject({ code: 'MR_ERR_CONFIG_INVALID', key: 'portal.secret' });
    expect(() => new PortalApi({ secret: 'short' })).toThrow(expect.objectContaining({ code: 'MR_ERR_CONFIG_INVALID' }));
    expect(() => new PortalApi({ secret: PORTAL_SECRET, baseUrl: 'ftp://x' })).toThrow(expect.objectContaining({ key: 'portal.baseUrl' }));
    const portal = new PortalApi({ secret: PORTAL_SECRET, baseUrl: 'https://hooks.example.com/' });
    for (const ttlMs of [0, -1, 1.5, 31 * 24 * 3_600_000]) {
      await expect(portal.link('acme', { ttlMs })).rejects.toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT' });
    }
    await expect(portal.link('')).rejects.toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT' });
    const link = await portal.link('acme. co/ä', { ttlMs: 60_000 });
    expect(link).toMatch(/^https:\/\/hooks\.example\.com\/portal\/enter\/[A-Za-z0-9_-]+\.\d+\.[A-Za-z0-9_-]+$/);
    const grant = new PortalSigner(PORTAL_SECRET).verifyLink(link.split('/').pop(), Date.now());
    expect(grant?.tenant).toBe('acme. co/ä');
    expect(link).not.toContain(PORTAL_SECRET);
  });
});
