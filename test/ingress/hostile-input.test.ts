// Hostile input at the door (issue 12, SPEC §5), end to end over real HTTP on both stores:
// requests a careless or malicious sender can craft. Each one gets a typed JSON answer and
// leaves nothing stored.

import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { MailroomConfig } from '../../src/config/define-config.js';
import { createLogger } from '../../src/log.js';
import { shopifyProvider } from '../../src/providers/shopify.js';
import { createForwardTask } from '../../src/tasks/forward.js';
import { jsonLines, logSink } from '../harness/log-sink.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';
import { startReceiver } from '../tasks/task-kit.js';
import type { Receiver } from '../tasks/task-kit.js';
import { closeAll, countRows, exchangeRaw, openIngressMailroom, openRaw, postHook, postWatchingErrors, startIngress } from './ingress-kit.js';
import type { RawResponse } from './ingress-kit.js';

const STANDARD_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const STRIPE_SECRET = 'whsec_5f0e1d2c3b4a69788796a5b4c3d2e1f0';
const SHOPIFY_SECRET = 'shpss_5c2a0b1d9e8f7a6b';
const GITHUB_SECRET = "It's a Secret to Everybody";

const config: MailroomConfig = {
  sources: {
    standard: { provider: 'standard', secrets: [STANDARD_SECRET], tasks: ['record'] },
    stripe: { provider: 'stripe', secrets: [STRIPE_SECRET], tasks: ['record'] },
    shopify: { provider: 'shopify', secrets: [SHOPIFY_SECRET], tasks: ['to_app'] },
    github: { provider: 'github', secrets: [GITHUB_SECRET], tasks: [{ task: 'deploy', events: ['push'] }, 'record'] },
  },
};

const json = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

/**
 * Standard Webhooks headers for `body` taken byte for byte. Signed by the documented scheme
 * rather than the reference library, which signs a string and so cannot sign bytes that are
 * not UTF-8 (hooks.test.ts cross-checks the scheme against the library).
 */
function standardHeaders(body: Buffer, id: string, at = new Date()): Record<string, string> {
  const timestamp = String(Math.floor(at.getTime() / 1000));
  const key = Buffer.from(STANDARD_SECRET.slice('whsec_'.length), 'base64');
  const digest = createHmac('sha256', key).update(`${id}.${timestamp}.`).update(body).digest('base64');
  return { 'content-type': 'application/json', 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${digest}` };
}

/** A Stripe-Signature for `body` now, by Stripe's documented scheme. */
function stripeHeaders(body: Buffer): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const digest = createHmac('sha256', STRIPE_SECRET).update(`${timestamp}.`).update(body).digest('hex');
  return { 'content-type': 'application/json', 'stripe-signature': `t=${timestamp},v1=${digest}` };
}

/** A correctly signed GitHub delivery's headers; `routing` replaces its delivery id and event headers. */
function githubHeaders(body: Buffer, routing: Record<string, string | string[]> = {}): Record<string, string | string[]> {
  return {
    'content-type': 'application/json',
    'x-hub-signature-256': `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`,
    'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    'x-github-event': 'push',
    ...routing,
  };
}

/** A request head for `path` with `headers`, declaring a body of `contentLength` bytes. */
function requestHead(path: string, headers: Record<string, string>, contentLength: number): string {
  const lines = Object.entries({ host: '127.0.0.1', 'content-type': 'application/json', ...headers }).map(([name, value]) => `${name}: ${value}`);
  return [`POST ${path} HTTP/1.1`, ...lines, `content-length: ${contentLength}`, '', ''].join('\r\n');
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** Heads whose headers alone are enough to refuse: the body is never sent. */
const refusableByHeaders: { title: string; path: string; headers: Record<string, string>; reason: string }[] = [
  { title: 'no signature header', path: '/hooks/standard', headers: { 'webhook-id': 'msg_h1', 'webhook-timestamp': String(nowSeconds()) }, reason: 'missing_header' },
  { title: 'a malformed signature header', path: '/hooks/github', headers: { 'x-hub-signature-256': 'md5=0123', 'x-github-event': 'push' }, reason: 'malformed_header' },
  { title: 'a malformed timestamp', path: '/hooks/standard', headers: { 'webhook-id': 'msg_h2', 'webhook-timestamp': 'now', 'webhook-signature': 'v1,AAAA' }, reason: 'malformed_header' },
  { title: 'a timestamp ten minutes old', path: '/hooks/standard', headers: { 'webhook-id': 'msg_h3', 'webhook-timestamp': String(nowSeconds() - 600), 'webhook-signature': 'v1,AAAA' }, reason: 'stale_timestamp' },
  { title: 'a Stripe timestamp ten minutes ahead', path: '/hooks/stripe', headers: { 'stripe-signature': `t=${nowSeconds() + 600},v1=00` }, reason: 'future_timestamp' },
];

/** Room for four bodies of `BUDGET_BODY_LIMIT_BYTES`, not five. */
const BUDGET_BYTES = 65_536;
const BUDGET_BODY_LIMIT_BYTES = 16_000;
const budgetConfig: MailroomConfig = {
  server: { bodyLimitBytes: BUDGET_BODY_LIMIT_BYTES, bodyBufferLimitBytes: BUDGET_BYTES },
  sources: { standard: { provider: 'standard', secrets: [STANDARD_SECRET], tasks: ['record'] } },
};

/**
 * The head of an unsigned request that passes every header check (a well-formed signature
 * for nothing, a current timestamp), so only its body could refuse it.
 */
function plausibleHead(id: string, contentLength: number | 'chunked'): string {
  const headers = { 'webhook-id': id, 'webhook-timestamp': String(nowSeconds()), 'webhook-signature': `v1,${Buffer.alloc(32, 7).toString('base64')}` };
  if (contentLength !== 'chunked') return requestHead('/hooks/standard', headers, contentLength);
  return requestHead('/hooks/standard', { ...headers, 'transfer-encoding': 'chunked' }, 0).replace('content-length: 0\r\n', '');
}

/** Short timeouts, so a test sees node's timeout sweep fire within a second. */
const SHORT_TIMEOUTS = { headersTimeoutMs: 300, requestTimeoutMs: 600 };

/** Requests node's HTTP parser refuses before (or while) a route reads them. */
const refusedByTheParser: { title: string; bytes: () => string; status: number; code: string }[] = [
  { title: 'headers that do not arrive in time', bytes: () => 'POST /hooks/standard HTTP/1.1\r\nhost: 127.0.0.1\r\n', status: 408, code: 'MR_ERR_REQUEST_TIMEOUT' },
  { title: 'a body that does not arrive in time', bytes: () => `${plausibleHead('msg_slow_body', 1_000)}{"type":`, status: 408, code: 'MR_ERR_REQUEST_TIMEOUT' },
  { title: 'headers larger than the server accepts', bytes: () => `POST /hooks/standard HTTP/1.1\r\nx-padding: ${'a'.repeat(20_000)}\r\n\r\n`, status: 431, code: 'MR_ERR_HEADERS_TOO_LARGE' },
  { title: 'bytes that are not HTTP', bytes: () => 'HELLO /hooks/standard NOPE\r\n\r\n', status: 400, code: 'MR_ERR_REQUEST_MALFORMED' },
  { title: 'a chunked body that does not parse', bytes: () => `${plausibleHead('msg_bad_chunk', 'chunked')}zz\r\n`, status: 400, code: 'MR_ERR_REQUEST_MALFORMED' },
  { title: 'an HTTP/1.1 request without a Host header', bytes: () => 'POST /hooks/standard HTTP/1.1\r\ncontent-length: 2\r\nconnection: close\r\n\r\nhi', status: 400, code: 'MR_ERR_REQUEST_MALFORMED' },
  // Refused before the body is invited: no 100 Continue first.
  { title: 'an HTTP/1.1 request without a Host header that expects 100-continue', bytes: () => 'POST /hooks/standard HTTP/1.1\r\ncontent-length: 2\r\nexpect: 100-continue\r\n\r\n', status: 400, code: 'MR_ERR_REQUEST_MALFORMED' },
];

/** Signed deliveries whose id or type no store should be asked to hold. */
const unholdableIdentities: { title: string; source: 'standard' | 'stripe'; body: Buffer; id?: string }[] = [
  { title: 'a 4,000-character delivery id header', source: 'standard', body: json({ type: 'user.created' }), id: `msg_${'x'.repeat(3_996)}` },
  { title: 'a delivery id of 257 bytes of UTF-8', source: 'standard', body: json({ type: 'user.created' }), id: `msg_${'é'.repeat(126)}x` },
  { title: 'a NUL byte in a body delivery id', source: 'stripe', body: json({ id: 'evt_1\u0000x', type: 'invoice.paid' }) },
  { title: 'a NUL byte in the event type', source: 'standard', body: json({ type: 'user.\u0000created' }), id: 'msg_nul_type' },
  { title: 'a line break in a body delivery id', source: 'stripe', body: json({ id: 'evt_1\nforged log line', type: 'invoice.paid' }) },
  { title: 'a 300-character event type', source: 'stripe', body: json({ id: 'evt_long_type', type: 't'.repeat(300) }) },
];

describe.each(storeHarnesses)('hostile input at the door on $name', (harness) => {
  let receiver: Receiver | null = null;
  afterEach(async () => {
    await closeAll(harness);
    await receiver?.close();
    receiver = null;
  });

  async function setup(options: Parameters<typeof startIngress>[2] = {}) {
    const { mr, harnessStore } = await openIngressMailroom(harness);
    const { url, ingress } = await startIngress(mr, config, options);
    return { mr, url, ingress, harnessStore };
  }

  it.skipIf(!harness.isAvailable)('refuses a signed JSON body that is not valid UTF-8 with 400 and stores nothing', async () => {
    const { url, harnessStore } = await setup();
    // `{"type":"a\xff"}`: a lone 0xff byte can never appear in UTF-8.
    const body = Buffer.concat([Buffer.from('{"type":"a', 'utf8'), Buffer.from([0xff]), Buffer.from('"}', 'utf8')]);
    const response = await postHook(url, 'standard', body, standardHeaders(body, 'msg_not_utf8'));
    expect(response.status, response.text).toBe(400);
    expect(response.json).toEqual({ error: { code: 'MR_ERR_BODY_MALFORMED', message: expect.stringContaining('UTF-8') } });
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });

  it.skipIf(!harness.isAvailable).each(unholdableIdentities)('refuses $title with 400 and stores nothing', async ({ source, body, id }) => {
    const { url, harnessStore } = await setup();
    const headers = source === 'stripe' ? stripeHeaders(body) : standardHeaders(body, id!);
    const response = await postHook(url, source, body, headers);
    expect(response.status, response.text).toBe(400);
    expect(response.json).toEqual({ error: { code: 'MR_ERR_EVENT_IDENTITY_INVALID', message: expect.any(String) } });
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });

  it.skipIf(!harness.isAvailable)('stores a delivery id and an event type of exactly 256 bytes of UTF-8', async () => {
    const { mr, url } = await setup();
    const id = `msg_${'é'.repeat(126)}`;
    const type = `${'ü'.repeat(127)}.x`;
    expect([Buffer.byteLength(id), Buffer.byteLength(type)]).toEqual([256, 256]);
    const body = json({ type });
    const response = await postHook(url, 'standard', body, standardHeaders(body, id));
    expect(response.status, response.text).toBe(202);
    const event = await mr.store.eventGet({ id: response.json.id });
    expect([event!.deliveryId, event!.type]).toEqual([id, type]);
  });

  it.skipIf(!harness.isAvailable)('stores and forwards a Shopify delivery signed under the unprefixed header names without its signature', async () => {
    const { mr, url } = await setup();
    receiver = await startReceiver();
    mr.task('to_app', createForwardTask({ kind: 'forward', url: receiver.url }));
    const body = json({ id: 820982911946154500, email: 'jon@example.com' });
    const signed = shopifyProvider.sign({ rawBody: body, secret: SHOPIFY_SECRET, now: new Date(), options: {}, deliveryId: 'b54557e4-unprefixed', eventType: 'orders/create' });
    // Shopify's events webhooks send the classic headers without their X- prefix.
    const headers = Object.fromEntries(Object.entries(signed).map(([name, value]) => [name.replace(/^x-shopify-/, 'shopify-'), value]));
    expect(headers).toHaveProperty('shopify-hmac-sha256');
    const response = await postHook(url, 'shopify', body, { 'content-type': 'application/json', ...headers });
    expect(response.status, response.text).toBe(202);

    const event = await mr.store.eventGet({ id: response.json.id });
    expect(event!.deliveryId).toBe('b54557e4-unprefixed');
    expect(event!.headers['shopify-topic']).toBe('orders/create');
    expect(event!.headers).not.toHaveProperty('shopify-hmac-sha256');

    const worker = mr.work({ pollMs: 20 });
    await waitFor(() => receiver!.received.length === 1, { description: 'the forward to reach the app' });
    await worker.stop();
    const forwarded = receiver.received[0]!.headers;
    expect(forwarded['shopify-topic']).toBe('orders/create');
    expect(forwarded).not.toHaveProperty('shopify-hmac-sha256');
    expect(JSON.stringify(forwarded)).not.toContain(headers['shopify-hmac-sha256']!);
  });

  it.skipIf(!harness.isAvailable).each([
    { header: 'x-github-event', values: ['push', 'ping'] },
    { header: 'x-github-event', values: ['push', 'push'] },
    { header: 'x-github-delivery', values: ['d-1', 'd-2'] },
  ])('refuses a signed delivery with two $header headers ($values) as ambiguous with 400', async ({ header, values }) => {
    const { url, harnessStore } = await setup();
    const body = json({ ref: 'refs/heads/main' });
    const response = await postHook(url, 'github', body, githubHeaders(body, { [header]: values }));
    expect(response.status, response.text).toBe(400);
    expect(response.json).toEqual({ error: { code: 'MR_ERR_HEADER_AMBIGUOUS', message: expect.stringContaining(header) } });
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });

  it.skipIf(!harness.isAvailable)('refuses an event header sent twice in two spellings as ambiguous with 400', async () => {
    const { url, harnessStore } = await setup();
    const body = json({ ref: 'refs/heads/main' });
    // Raw, because node's client merges header names that differ only in case.
    const headers = { ...(githubHeaders(body) as Record<string, string>), 'X-GitHub-Event': 'ping' };
    const response = await exchangeRaw(url, requestHead('/hooks/github', headers, body.length) + body.toString());
    expect(response.status, response.text).toBe(400);
    expect(response.json).toEqual({ error: { code: 'MR_ERR_HEADER_AMBIGUOUS', message: expect.stringContaining('x-github-event') } });
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });

  it.skipIf(!harness.isAvailable)('routes a signed GitHub delivery with one event header as before', async () => {
    const { mr, url } = await setup();
    const body = json({ ref: 'refs/heads/main' });
    const response = await postHook(url, 'github', body, githubHeaders(body));
    expect(response.status, response.text).toBe(202);
    expect((await mr.listJobs({ eventId: response.json.id })).map((job) => job.type).sort()).toEqual(['deploy', 'record']);
  });

  it.skipIf(!harness.isAvailable)("delivers the 413 for a 10 MB body to node's http client, which sees no EPIPE", async () => {
    const { url, harnessStore } = await setup();
    const body = Buffer.alloc(10_000_000, 0x61);
    // Before the fix, 10 of 10 tries read the 413 and then failed with EPIPE.
    for (let attempt = 0; attempt < 5; attempt++) {
      const seen = await postWatchingErrors(url, '/hooks/standard', body, standardHeaders(body, `msg_big_${attempt}`));
      expect(seen).toEqual({ status: 413, json: { error: { code: 'MR_ERR_PAYLOAD_TOO_LARGE', message: expect.any(String) } }, errors: [] });
    }
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });

  it.skipIf(!harness.isAvailable)('delivers a refusal made before reading a 10 MB body without EPIPE', async () => {
    const { url } = await setup();
    const body = Buffer.alloc(10_000_000, 0x61);
    const seen = await postWatchingErrors(url, '/hooks/nope', body, { 'content-type': 'application/json' });
    expect(seen).toEqual({ status: 404, json: { error: { code: 'MR_ERR_UNKNOWN_SOURCE', message: expect.any(String) } }, errors: [] });
  });

  it.skipIf(!harness.isAvailable).each(refusableByHeaders)('refuses $title with 401 before a byte of the body arrives', async ({ path, headers, reason }) => {
    const { url, ingress, harnessStore } = await setup();
    const response = await exchangeRaw(url, requestHead(path, headers, 900_000));
    expect(ingress.bodyBudget.heldBytes).toBe(0);
    expect(response.status, response.text).toBe(401);
    expect(response.json).toEqual({ error: { code: 'MR_ERR_SIGNATURE_INVALID', message: expect.stringMatching(new RegExp(`^${reason}: `)) } });
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });

  it.skipIf(!harness.isAvailable)('holds no more than the body budget across 100 senders stalling near their end, and answers the rest 503', async () => {
    const { mr, harnessStore } = await openIngressMailroom(harness);
    const { url, ingress } = await startIngress(mr, budgetConfig);
    const answered: RawResponse[] = [];
    // Each declares a body just under the source limit, sends all but 1,000 bytes, and stalls.
    const sent = BUDGET_BODY_LIMIT_BYTES - 1_000;
    const senders = Array.from({ length: 100 }, (_, i) => openRaw(url, plausibleHead(`msg_stall_${i}`, BUDGET_BODY_LIMIT_BYTES) + 'x'.repeat(sent)));
    for (const sender of senders) void sender.answer.then((response) => response && answered.push(response));
    // Those whose bytes did not fit are answered; the rest are held whole, at most four.
    await waitFor(() => answered.length + ingress.bodyBudget.heldBytes / sent === 100, { description: 'every sender answered or held whole' });
    expect(ingress.bodyBudget.heldBytes).toBeLessThanOrEqual(BUDGET_BYTES);
    expect(answered.length).toBeGreaterThanOrEqual(96);
    for (const response of answered) {
      expect(response.status).toBe(503);
      expect(response.headers['retry-after']).toBe('5');
      expect(response.json).toEqual({ error: { code: 'MR_ERR_INGRESS_BUSY', message: expect.any(String) } });
    }

    for (const sender of senders) sender.socket.destroy();
    await waitFor(() => ingress.bodyBudget.heldBytes === 0, { description: 'the stalled bodies to be released' });
    const body = json({ type: 'user.created' });
    expect((await postHook(url, 'standard', body, standardHeaders(body, 'msg_fits'))).status).toBe(202);
    expect(await countRows(harnessStore)).toEqual({ events: 1, jobs: 1 });
  });

  it.skipIf(!harness.isAvailable)('holds nothing for bodies declared and never sent: a signed delivery still gets in beside 64 of them', async () => {
    const { mr, harnessStore } = await openIngressMailroom(harness);
    const { url, ingress } = await startIngress(mr, budgetConfig);
    // Headers that pass every check that needs no secret, a body declared at the limit, no byte of it.
    const phantoms = Array.from({ length: 64 }, (_, i) => openRaw(url, plausibleHead(`msg_phantom_${i}`, BUDGET_BODY_LIMIT_BYTES)));
    const body = json({ type: 'user.created' });
    const response = await postHook(url, 'standard', body, standardHeaders(body, 'msg_real'));
    expect(response.status, response.text).toBe(202);
    expect(ingress.bodyBudget.heldBytes).toBe(0);
    for (const phantom of phantoms) phantom.socket.destroy();
    expect(await countRows(harnessStore)).toEqual({ events: 1, jobs: 1 });
  });

  it.skipIf(!harness.isAvailable)('answers 503 to a chunked body the moment it grows past the budget', async () => {
    const { mr, harnessStore } = await openIngressMailroom(harness);
    const { url, ingress } = await startIngress(mr, budgetConfig);
    const sent = BUDGET_BODY_LIMIT_BYTES - 100;
    const stalled = Array.from({ length: 4 }, (_, i) => openRaw(url, plausibleHead(`msg_stall_${i}`, BUDGET_BODY_LIMIT_BYTES) + 'x'.repeat(sent)));
    await waitFor(() => ingress.bodyBudget.heldBytes === 4 * sent, { description: 'four bodies to be held' });
    const chunk = 'y'.repeat(2_000);
    const chunked = openRaw(url, `${plausibleHead('msg_chunked', 'chunked')}${chunk.length.toString(16)}\r\n${chunk}\r\n`);
    const response = await chunked.answer;
    expect(response?.status).toBe(503);
    expect(response?.json.error.code).toBe('MR_ERR_INGRESS_BUSY');
    expect(ingress.bodyBudget.heldBytes).toBe(4 * sent);
    // A declared length that does not fit what is free is refused before a byte is read.
    const declared = await openRaw(url, plausibleHead('msg_declared', 2_000)).answer;
    expect(declared?.status).toBe(503);
    for (const sender of [...stalled, chunked]) sender.socket.destroy();
    await waitFor(() => ingress.bodyBudget.heldBytes === 0, { description: 'the stalled bodies to be released' });
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });

  it.skipIf(!harness.isAvailable)('refuses to start when a source limit is larger than the body budget', async () => {
    const { mr } = await openIngressMailroom(harness);
    const tooBig = { ...budgetConfig, sources: { standard: { ...budgetConfig.sources!.standard!, bodyLimitBytes: BUDGET_BYTES + 1 } } };
    await expect(startIngress(mr, tooBig)).rejects.toMatchObject({ code: 'MR_ERR_CONFIG_INVALID', key: 'sources.standard.bodyLimitBytes' });
  });

  it.skipIf(!harness.isAvailable)('invites the body of a well-formed request that expects 100-continue, and stores it', async () => {
    const { url, harnessStore } = await setup();
    const body = json({ type: 'invoice.paid', data: { n: 1 } });
    const head = requestHead('/hooks/standard', { ...standardHeaders(body, 'msg_expect_1'), expect: '100-continue', connection: 'close' }, body.length);
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    let received = '';
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    socket.on('error', () => undefined);
    const invited = new Promise<void>((resolve) =>
      socket.on('data', (chunk: Buffer) => {
        received += chunk.toString('latin1');
        if (received.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) resolve();
      }),
    );
    socket.write(head);
    await invited;
    socket.write(body);
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 202 /);
    expect(await countRows(harnessStore)).toEqual({ events: 1, jobs: 1 });
  });

  it.skipIf(!harness.isAvailable)('keeps the connection for the next request after an invited 100-continue request', async () => {
    const { url, harnessStore } = await setup();
    const first = json({ type: 'invoice.paid', data: { n: 1 } });
    const second = json({ type: 'invoice.paid', data: { n: 2 } });
    const { hostname, port } = new URL(url);
    const socket = connect(Number(port), hostname);
    let received = '';
    socket.on('error', () => undefined);
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    const waiting: Array<{ pattern: RegExp; resolve: () => void }> = [];
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1');
      for (const waiter of [...waiting]) {
        if (!waiter.pattern.test(received)) continue;
        waiting.splice(waiting.indexOf(waiter), 1);
        waiter.resolve();
      }
    });
    /** Resolves once what the server sent so far matches `pattern`. */
    const seen = (pattern: RegExp) => new Promise<void>((resolve) => (pattern.test(received) ? resolve() : waiting.push({ pattern, resolve })));
    socket.write(requestHead('/hooks/standard', { ...standardHeaders(first, 'msg_expect_keep_1'), expect: '100-continue' }, first.length));
    await seen(/^HTTP\/1\.1 100 Continue\r\n\r\n/);
    socket.write(first);
    await seen(/HTTP\/1\.1 202 [^]*\r\n\r\n\{[^]*\}$/);
    expect(received.toLowerCase()).not.toContain('connection: close');
    // The same connection carries a second request.
    socket.write(requestHead('/hooks/standard', { ...standardHeaders(second, 'msg_expect_keep_2'), connection: 'close' }, second.length) + second);
    await closed;
    expect(received.match(/HTTP\/1\.1 202 /g)).toHaveLength(2);
    expect(await countRows(harnessStore)).toEqual({ events: 2, jobs: 2 });
  });

  it.skipIf(!harness.isAvailable)('refuses a request that expects 100-continue without inviting its body, and closes', async () => {
    const { url, harnessStore } = await setup();
    const body = json({ type: 'invoice.paid', data: { n: 1 } });
    /** Sends only the head, as a client waiting for 100 Continue does; what came back once the server closed. */
    const headOnly = async (path: string, headers: Record<string, string>, declared: number) => {
      const { hostname, port } = new URL(url);
      const socket = connect(Number(port), hostname);
      let received = '';
      socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
      socket.on('error', () => undefined);
      const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
      socket.write(requestHead(path, { ...headers, expect: '100-continue' }, declared));
      await closed;
      return received;
    };
    // No such source; headers that fail their checks (no signature); a declared length past the limit.
    const unknown = await headOnly('/hooks/nosuchsource', standardHeaders(body, 'msg_expect_2'), body.length);
    const unsigned = await headOnly('/hooks/standard', { 'content-type': 'application/json' }, body.length);
    const tooLarge = await headOnly('/hooks/standard', standardHeaders(body, 'msg_expect_3'), 64 * 1024 * 1024);
    expect(unknown).toMatch(/^HTTP\/1\.1 404 /);
    expect(unsigned).toMatch(/^HTTP\/1\.1 4\d\d /);
    expect(tooLarge).toMatch(/^HTTP\/1\.1 413 /);
    for (const answer of [unknown, unsigned, tooLarge]) {
      expect(answer).not.toContain('100 Continue');
      expect(answer.toLowerCase()).toContain('connection: close');
    }
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });

  it.skipIf(!harness.isAvailable).each(refusedByTheParser)('answers $title with $status in the JSON error shape and stores nothing', async ({ bytes, status, code }) => {
    const { url, ingress, harnessStore } = await setup(SHORT_TIMEOUTS);
    const response = await exchangeRaw(url, bytes());
    expect(response.status, response.text).toBe(status);
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(response.json).toEqual({ error: { code, message: expect.any(String) } });
    await waitFor(() => ingress.bodyBudget.heldBytes === 0, { description: 'any body reserved to be released' });
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });

  it.skipIf(!harness.isAvailable)('never logs the raw bytes of a malformed request, even at debug level', async () => {
    const out = logSink();
    const { url } = await setup({ logger: createLogger({ destination: out, level: 'debug' }) });
    const secrets = ['Bearer tok_live_9f8e7d6c5b4a', 't=1700000000,v1=5257a869e7ecebeda32affa62cd'];
    const bytes = `POST /hooks/stripe HTTP/1.1\r\nauthorization: ${secrets[0]}\r\nstripe-signature: ${secrets[1]}\r\nbad header line\r\n\r\n`;
    await exchangeRaw(url, bytes);
    const refused = await waitFor(() => jsonLines(out.text()).find((line) => String(line.msg).startsWith('malformed HTTP request')), {
      description: 'the malformed request to be logged',
    });
    expect(refused.level).toBeGreaterThanOrEqual(20);
    // pino writes a Buffer as { type: 'Buffer', data: [bytes] }: decode those before looking.
    const logged = out.text().replace(/\{"type":"Buffer","data":\[([\d,]*)\]\}/g, (_, bytes: string) => Buffer.from(bytes.split(',').map(Number)).toString('latin1'));
    expect(logged).not.toContain('rawPacket');
    for (const secret of secrets) expect(logged).not.toContain(secret);
  });

  it.skipIf(!harness.isAvailable)('stores a replayed GitHub capture under a new delivery id or event type, as docs/ingress.md warns', async () => {
    const { mr, url } = await setup();
    const body = json({ zen: 'Keep it logically awesome.', hook_id: 1 });
    const captured = githubHeaders(body, { 'x-github-delivery': 'd-original', 'x-github-event': 'ping' });
    expect((await postHook(url, 'github', body, captured)).status).toBe(202);
    // Same bytes, same signature, other headers: the signature covers the body only.
    const replayed = await postHook(url, 'github', body, { ...captured, 'x-github-delivery': 'd-forged', 'x-github-event': 'push' });
    expect(replayed.status).toBe(202);
    expect(replayed.json.duplicate).toBe(false);
    expect((await mr.listJobs({ eventId: replayed.json.id })).map((job) => job.type).sort()).toEqual(['deploy', 'record']);
    const doc = readFileSync(new URL('../../docs/ingress.md', import.meta.url), 'utf8');
    expect(doc).toContain('GitHub signs the body only');
    expect(doc).toMatch(/`X-GitHub-Delivery` and `X-GitHub-Event` headers are not covered/);
  });
});
