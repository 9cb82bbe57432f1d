// The webhook route end to end over real HTTP on both stores: every provider signed by its
// own library (or its documented scheme where the library only verifies), fan-out, the
// stored event, dedupe under concurrency, and every refusal storing nothing.

import { createHmac } from 'node:crypto';
import { sign as octokitSign } from '@octokit/webhooks-methods';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { Webhook as SvixWebhook } from 'svix';
import { afterEach, describe, expect, it } from 'vitest';
import type { MailroomConfig } from '../../src/config/define-config.js';
import type { InboundEvent } from '../../src/core/types.js';
import { shopifyProvider } from '../../src/providers/shopify.js';
import { slackProvider } from '../../src/providers/slack.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';
import { closeAll, closeServers, countRows, openIngressMailroom, postHook, send, startIngress } from './ingress-kit.js';
import { logSink } from '../harness/log-sink.js';
import { Mailroom } from '../../src/mailroom.js';
import pino from 'pino';

const SECRETS = {
  stripe: 'whsec_5f0e1d2c3b4a69788796a5b4c3d2e1f0',
  github: "It's a Secret to Everybody",
  standard: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  polar: 'polar_whs_7Hk2pQv9sXc4mN1rT8yL0aB3dF6gJ5eW',
  shopify: 'shpss_5c2a0b1d9e8f7a6b',
  slack: '8f742231b10e8888abcd99yyyzzz85a5',
  hmac: 'hmac-shared-secret-0123456789',
};
const SMALL_LIMIT_BYTES = 1_024;

const config: MailroomConfig = {
  sources: {
    stripe: {
      provider: 'stripe',
      secrets: [SECRETS.stripe],
      tasks: ['record', { task: 'by_customer', events: ['invoice.paid'], group: '$.data.object.customer' }],
    },
    github: { provider: 'github', secrets: [SECRETS.github], tasks: ['record', { task: 'deploy', events: ['push'] }] },
    githubForm: { provider: 'github', secrets: [SECRETS.github], tasks: [{ task: 'by_repo', group: '$.repository.full_name' }] },
    standard: { provider: 'standard', secrets: ['whsec_b2xkLXNlY3JldC1iZWZvcmUtcm90YXRpb24=', SECRETS.standard], tasks: ['record'] },
    polar: { provider: 'polar', secrets: [SECRETS.polar], tasks: ['record'] },
    shopify: { provider: 'shopify', secrets: [SECRETS.shopify], tasks: ['record'] },
    slack: { provider: 'slack', secrets: [SECRETS.slack], tasks: ['record'] },
    hmac: {
      provider: 'hmac',
      secrets: [SECRETS.hmac],
      options: { header: 'X-Signature', prefix: 'sha256=', idHeader: 'X-Request-Id', typePath: '$.type' },
      tasks: ['record'],
    },
    open: { provider: 'none', options: { idPath: '$.id', typePath: '$.kind' }, tasks: ['record'] },
    small: { provider: 'standard', secrets: [SECRETS.standard], tasks: ['record'], bodyLimitBytes: SMALL_LIMIT_BYTES },
  },
};

const nowSeconds = () => Math.floor(Date.now() / 1000);
const json = (value: unknown) => Buffer.from(JSON.stringify(value), 'utf8');

function standardHeaders(body: Buffer, id: string, at = new Date(), secret = SECRETS.standard): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new StandardWebhook(secret).sign(id, at, body.toString('utf8')),
  };
}

interface ProviderCase {
  readonly source: string;
  readonly title: string;
  readonly body: Buffer;
  readonly headers: () => Promise<Record<string, string>>;
  readonly deliveryId: string | null;
  readonly type: string | null;
  /** Headers that must not be stored. */
  readonly secretHeaders: readonly string[];
}

const stripeBody = json({ id: 'evt_1Route', object: 'event', type: 'invoice.paid', data: { object: { customer: 'cus_42' } } });
const githubBody = json({ ref: 'refs/heads/main', after: 'abc123' });
const standardBody = json({ type: 'user.created', data: { id: 'u_1' } });
const polarBody = json({ type: 'order.paid', data: { id: 'ord_1' } });
const shopifyBody = json({ id: 820982911946154500, email: 'jon@example.com' });
const slackBody = json({ type: 'event_callback', event_id: 'Ev0ROUTE', event: { type: 'app_mention', text: 'hi' } });
const hmacBody = json({ type: 'build.finished', id: 7 });
const noneBody = json({ id: 'n-1', kind: 'ping' });

const providerCases: ProviderCase[] = [
  {
    source: 'stripe',
    title: 'stripe signed by stripe.webhooks.generateTestHeaderString',
    body: stripeBody,
    headers: async () => ({
      'content-type': 'application/json; charset=utf-8',
      'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload: stripeBody.toString('utf8'), secret: SECRETS.stripe, timestamp: nowSeconds() }),
    }),
    deliveryId: 'evt_1Route',
    type: 'invoice.paid',
    secretHeaders: ['stripe-signature'],
  },
  {
    source: 'github',
    title: 'github signed by @octokit/webhooks-methods',
    body: githubBody,
    headers: async () => ({
      'content-type': 'application/json',
      'x-hub-signature-256': await octokitSign(SECRETS.github, githubBody.toString('utf8')),
      'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958',
      'x-github-event': 'push',
    }),
    deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    type: 'push',
    secretHeaders: ['x-hub-signature-256'],
  },
  {
    source: 'standard',
    title: 'standard signed by standardwebhooks with the second secret of a rotation',
    body: standardBody,
    headers: async () => standardHeaders(standardBody, 'msg_route_1'),
    deliveryId: 'msg_route_1',
    type: 'user.created',
    secretHeaders: ['webhook-signature'],
  },
  {
    source: 'standard',
    title: 'standard under svix-* header names signed by svix',
    body: standardBody,
    headers: async () => {
      const at = new Date();
      return {
        'content-type': 'application/json',
        'svix-id': 'msg_svix_1',
        'svix-timestamp': String(Math.floor(at.getTime() / 1000)),
        'svix-signature': new SvixWebhook(SECRETS.standard).sign('msg_svix_1', at, standardBody.toString('utf8')),
      };
    },
    deliveryId: 'msg_svix_1',
    type: 'user.created',
    secretHeaders: ['svix-signature'],
  },
  {
    source: 'polar',
    title: "polar signed the way @polar-sh/sdk keys standardwebhooks (the secret's UTF-8 bytes)",
    body: polarBody,
    headers: async () => standardHeaders(polarBody, 'msg_polar_route', new Date(), Buffer.from(SECRETS.polar, 'utf8').toString('base64')),
    deliveryId: 'msg_polar_route',
    type: 'order.paid',
    secretHeaders: ['webhook-signature'],
  },
  {
    source: 'shopify',
    title: "shopify signed by the documented scheme (Shopify's library only verifies)",
    body: shopifyBody,
    headers: async () => ({
      'content-type': 'application/json',
      ...shopifyProvider.sign({ rawBody: shopifyBody, secret: SECRETS.shopify, now: new Date(), options: {}, deliveryId: 'b54557e4-bdd9-4b37', eventType: 'orders/create' }),
    }),
    deliveryId: 'b54557e4-bdd9-4b37',
    type: 'orders/create',
    secretHeaders: ['x-shopify-hmac-sha256'],
  },
  {
    source: 'slack',
    title: "slack signed by the documented v0 scheme (Slack's SDKs only verify)",
    body: slackBody,
    headers: async () => ({
      'content-type': 'application/json',
      ...slackProvider.sign({ rawBody: slackBody, secret: SECRETS.slack, now: new Date(), options: { toleranceMs: 300_000 } }),
    }),
    deliveryId: 'Ev0ROUTE',
    type: 'app_mention',
    secretHeaders: ['x-slack-signature'],
  },
  {
    source: 'hmac',
    title: 'hmac with a configured header, prefix and id header',
    body: hmacBody,
    headers: async () => ({
      'content-type': 'application/json',
      'x-signature': `sha256=${createHmac('sha256', SECRETS.hmac).update(hmacBody).digest('hex')}`,
      'x-request-id': 'req-77',
    }),
    deliveryId: 'req-77',
    type: 'build.finished',
    secretHeaders: ['x-signature'],
  },
  {
    source: 'open',
    title: 'none (set explicitly) with the id from a JSON path',
    body: noneBody,
    headers: async () => ({ 'content-type': 'application/json' }),
    deliveryId: 'n-1',
    type: 'ping',
    secretHeaders: [],
  },
];

describe.each(storeHarnesses)('webhook ingress on $name', (harness) => {
  afterEach(async () => {
    await closeAll(harness);
  });

  async function setup() {
    const { mr, harnessStore } = await openIngressMailroom(harness);
    const { url } = await startIngress(mr, config);
    return { mr, url, harnessStore };
  }

  it.skipIf(!harness.isAvailable).each(providerCases)('stores an event from $title, byte-exact and without its signature, with its jobs', async (testCase) => {
    const { mr, url, harnessStore } = await setup();
    // A header the sender invented that looks like a credential is not kept either.
    const headers: Record<string, string> = { ...(await testCase.headers()), 'x-webhook-token': 'sender-secret-token' };
    const response = await postHook(url, testCase.source, testCase.body, headers);
    expect(response.status, response.text).toBe(202);
    expect(response.json).toEqual({ id: expect.any(String), duplicate: false });

    const event = (await mr.store.eventGet({ id: response.json.id })) as InboundEvent;
    expect(event.source).toBe(testCase.source);
    expect(event.deliveryId).toBe(testCase.deliveryId);
    expect(event.type).toBe(testCase.type);
    expect(Buffer.compare(event.rawBody, testCase.body)).toBe(0);
    for (const name of [...testCase.secretHeaders, 'x-webhook-token']) expect(event.headers).not.toHaveProperty(name);
    expect(event.headers['content-type']).toBe(headers['content-type']);

    const jobs = await mr.listJobs({ eventId: event.id });
    expect(jobs.map((job) => job.type)).toContain('record');
    for (const job of jobs) {
      expect(job.payload).toBeNull();
      expect(job.source).toBe(testCase.source);
    }
    expect(await countRows(harnessStore)).toEqual({ events: 1, jobs: jobs.length });
  });

  it.skipIf(!harness.isAvailable)('stores a job whose limits.key cannot key the event unkeyed, with one warning, rather than refusing a signed webhook', async () => {
    const log = logSink();
    const { store } = await harness.open();
    const mr = await Mailroom.open({ store, logger: pino({ level: 'debug' }, log) });
    try {
      const ran: unknown[] = [];
      mr.task('record', { limits: { key: (payload) => (payload as { customer: { id: string } }).customer.id, perKey: { concurrency: 1 } }, run: async (payload) => void ran.push(payload) });
      const { url } = await startIngress(mr, config);
      // No customer in these events: the key function throws. A refusal (it was a 503,
      // and a sender's retries cannot change the body) would lose them.
      for (const id of ['n-8', 'n-9']) {
        const response = await postHook(url, 'open', json({ id, kind: 'ping' }), { 'content-type': 'application/json' });
        expect(response.status, response.text).toBe(202);
      }
      const keyed = await postHook(url, 'open', json({ id: 'n-10', kind: 'ping', customer: { id: 'c-1' } }), { 'content-type': 'application/json' });
      expect(keyed.status).toBe(202);
      expect((await mr.listJobs({ type: 'record' })).length).toBe(3);
      const warnings = log.text().split('\n').filter((line) => line.includes('stored without a limit key'));
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain('"type":"record"');
      // An enqueue from code is still refused: its caller can fix its payload.
      await expect(mr.enqueue('record', {})).rejects.toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT', message: expect.stringContaining('limits.key of "record" threw') });
      const worker = mr.work();
      await waitFor(() => ran.length === 3, { description: 'the three jobs run' });
      await worker.stop({ timeoutMs: 2_000 });
    } finally {
      await closeServers();
      await mr.close({ timeoutMs: 2_000 });
    }
  });

  it.skipIf(!harness.isAvailable)('fans out only to tasks whose event filter matches, with a group from the JSON path', async () => {
    const { mr, url } = await setup();
    const stripe = providerCases[0]!;
    const response = await postHook(url, 'stripe', stripe.body, await stripe.headers());
    const jobs = await mr.listJobs({ eventId: response.json.id });
    expect(jobs.map((job) => [job.type, job.group])).toEqual([
      ['record', null],
      ['by_customer', 'cus_42'],
    ]);

    const github = await postHook(url, 'github', githubBody, {
      'content-type': 'application/json',
      'x-hub-signature-256': await octokitSign(SECRETS.github, githubBody.toString('utf8')),
      'x-github-delivery': 'd-issue',
      'x-github-event': 'issues',
    });
    expect((await mr.listJobs({ eventId: github.json.id })).map((job) => job.type)).toEqual(['record']);
  });

  it.skipIf(!harness.isAvailable)('hands the handler the parsed body as payload and the stored event as ctx.event', async () => {
    const { mr, url } = await setup();
    const seen: { payload: unknown; event: InboundEvent | null }[] = [];
    mr.task('record', (payload, ctx) => {
      seen.push({ payload, event: ctx.event });
    });
    const worker = mr.work({ pollMs: 20 });
    const response = await postHook(url, 'standard', standardBody, standardHeaders(standardBody, 'msg_worker_1'));
    await waitFor(() => seen.length === 1, { description: 'the record handler to run' });
    expect(seen[0]!.payload).toEqual(JSON.parse(standardBody.toString('utf8')));
    expect(seen[0]!.event?.id).toBe(response.json.id);
    expect(seen[0]!.event?.deliveryId).toBe('msg_worker_1');
    await worker.stop();
  });

  it.skipIf(!harness.isAvailable)('keeps accepting webhooks while their task\'s queue is paused, and the job runs after resume', async () => {
    const { mr, url } = await setup();
    const ran: string[] = [];
    mr.task('record', { queue: 'inbox', run: (_payload, ctx) => void ran.push(ctx.job.id) });
    mr.task('probe', (_payload, ctx) => void ran.push(ctx.job.id));
    expect(await mr.pauseQueue('inbox', { reason: 'downstream outage' })).toBe(true);
    const worker = mr.work({ pollMs: 20 });
    try {
      const response = await postHook(url, 'standard', standardBody, standardHeaders(standardBody, 'msg_paused_1'));
      expect(response.status, response.text).toBe(202);
      const [job, ...others] = await mr.listJobs({ eventId: response.json.id });
      expect(others).toEqual([]);
      expect(job).toMatchObject({ type: 'record', queue: 'inbox', status: 'pending', attempts: 0 });
      // A job on another queue, enqueued after the webhook's, runs: the worker has claimed
      // past the webhook's job, so its still being pending is the pause at work.
      const probe = await mr.enqueue('probe', {});
      await waitFor(() => ran.includes(probe.id), { description: 'the probe on the default queue to run' });
      expect(ran).toEqual([probe.id]);
      expect((await mr.getJob(job!.id))!).toMatchObject({ status: 'pending', attempts: 0 });

      expect(await mr.resumeQueue('inbox')).toBe(true);
      await waitFor(async () => (await mr.getJob(job!.id))?.status === 'done', { description: 'the webhook job to run after resume' });
      expect(ran).toEqual([probe.id, job!.id]);
    } finally {
      await worker.stop();
    }
  });

  it.skipIf(!harness.isAvailable)('answers a redelivery 200 duplicate:true with the same id and creates nothing', async () => {
    const { url, harnessStore } = await setup();
    const headers = standardHeaders(standardBody, 'msg_dup_1');
    const first = await postHook(url, 'standard', standardBody, headers);
    const before = await countRows(harnessStore);
    const second = await postHook(url, 'standard', standardBody, headers);
    expect(first.status).toBe(202);
    expect(second.status).toBe(200);
    expect(second.json).toEqual({ id: first.json.id, duplicate: true });
    expect(await countRows(harnessStore)).toEqual(before);
  });

  it.skipIf(!harness.isAvailable)('stores 50 concurrent copies of one delivery as one event with one set of jobs', async () => {
    const { url, harnessStore } = await setup();
    const stripe = providerCases[0]!;
    const headers = await stripe.headers();
    const responses = await Promise.all(Array.from({ length: 50 }, () => postHook(url, 'stripe', stripe.body, headers)));
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(49);
    expect(new Set(responses.map((r) => r.json.id)).size).toBe(1);
    expect(await countRows(harnessStore)).toEqual({ events: 1, jobs: 2 });
  });

  it.skipIf(!harness.isAvailable)('answers the Slack url_verification challenge without storing it', async () => {
    const { url, harnessStore } = await setup();
    const body = json({ token: 'legacy', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', type: 'url_verification' });
    const headers = { 'content-type': 'application/json', ...slackProvider.sign({ rawBody: body, secret: SECRETS.slack, now: new Date(), options: { toleranceMs: 300_000 } }) };
    const response = await postHook(url, 'slack', body, headers);
    expect(response.status).toBe(200);
    expect(response.json).toEqual({ challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P' });
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });

  it.skipIf(!harness.isAvailable)('stores a signed form-encoded body as it is (only a JSON content type must parse)', async () => {
    const { mr, url } = await setup();
    const form = Buffer.from('payload=%7B%22a%22%3A1%7D&x=%ff', 'utf8');
    const headers = { ...standardHeaders(form, 'msg_form_1'), 'content-type': 'application/x-www-form-urlencoded' };
    const response = await postHook(url, 'standard', form, headers);
    expect(response.status).toBe(202);
    const event = await mr.store.eventGet({ id: response.json.id });
    expect(Buffer.compare(event!.rawBody, form)).toBe(0);
  });

  it.skipIf(!harness.isAvailable)("reads a group from GitHub's form content type, the JSON in its payload field", async () => {
    const { mr, url } = await setup();
    const event = { ref: 'refs/heads/main', repository: { full_name: 'octo/repo' } };
    const form = Buffer.from(new URLSearchParams({ payload: JSON.stringify(event) }).toString(), 'utf8');
    const response = await postHook(url, 'githubForm', form, {
      'content-type': 'application/x-www-form-urlencoded',
      'x-hub-signature-256': await octokitSign(SECRETS.github, form.toString('utf8')),
      'x-github-delivery': 'd-form',
      'x-github-event': 'push',
    });
    expect(response.status).toBe(202);
    expect((await mr.listJobs({ eventId: response.json.id })).map((job) => [job.type, job.group])).toEqual([['by_repo', 'octo/repo']]);
    expect(Buffer.compare((await mr.store.eventGet({ id: response.json.id }))!.rawBody, form)).toBe(0);
  });

  it.skipIf(!harness.isAvailable)('accepts a body exactly at the source limit', async () => {
    const { url } = await setup();
    const body = Buffer.from(JSON.stringify({ pad: 'x'.repeat(SMALL_LIMIT_BYTES - 10) }), 'utf8');
    expect(body.length).toBe(SMALL_LIMIT_BYTES);
    const response = await postHook(url, 'small', body, standardHeaders(body, 'msg_at_limit'));
    expect(response.status).toBe(202);
  });

  describe('refusals store nothing', () => {
    const cases: { title: string; status: number; code: string; request: () => Promise<{ path: string; method?: string; body?: Buffer; headers?: Record<string, string> }> }[] = [
      {
        title: 'an unknown source is 404',
        status: 404,
        code: 'MR_ERR_UNKNOWN_SOURCE',
        request: async () => ({ path: '/hooks/nope', body: standardBody, headers: standardHeaders(standardBody, 'm1') }),
      },
      {
        title: 'a missing signature is 401',
        status: 401,
        code: 'MR_ERR_SIGNATURE_INVALID',
        request: async () => ({ path: '/hooks/standard', body: standardBody, headers: { 'content-type': 'application/json', 'webhook-id': 'm2', 'webhook-timestamp': String(nowSeconds()) } }),
      },
      {
        title: 'a bad signature is 401',
        status: 401,
        code: 'MR_ERR_SIGNATURE_INVALID',
        request: async () => ({ path: '/hooks/standard', body: json({ type: 'user.created', data: { id: 'u_2' } }), headers: standardHeaders(standardBody, 'm3') }),
      },
      {
        title: 'a signature of the wrong length is 401, not 500',
        status: 401,
        code: 'MR_ERR_SIGNATURE_INVALID',
        request: async () => ({ path: '/hooks/github', body: githubBody, headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=abcd', 'x-github-delivery': 'd', 'x-github-event': 'push' } }),
      },
      {
        title: 'a stale timestamp is 401',
        status: 401,
        code: 'MR_ERR_SIGNATURE_INVALID',
        request: async () => ({ path: '/hooks/standard', body: standardBody, headers: standardHeaders(standardBody, 'm4', new Date(Date.now() - 10 * 60_000)) }),
      },
      {
        title: 'a future timestamp is 401',
        status: 401,
        code: 'MR_ERR_SIGNATURE_INVALID',
        request: async () => ({ path: '/hooks/standard', body: standardBody, headers: standardHeaders(standardBody, 'm5', new Date(Date.now() + 10 * 60_000)) }),
      },
      {
        title: 'a signed body that says JSON and does not parse is 400',
        status: 400,
        code: 'MR_ERR_BODY_MALFORMED',
        request: async () => {
          const body = Buffer.from('{"type": "user.created", ', 'utf8');
          return { path: '/hooks/standard', body, headers: standardHeaders(body, 'm6') };
        },
      },
      {
        title: 'a body one byte over the source limit is 413',
        status: 413,
        code: 'MR_ERR_PAYLOAD_TOO_LARGE',
        request: async () => {
          const body = Buffer.alloc(SMALL_LIMIT_BYTES + 1, 0x61);
          return { path: '/hooks/small', body, headers: standardHeaders(body, 'm7') };
        },
      },
      {
        title: 'a body one byte over the default 1 MiB limit is 413',
        status: 413,
        code: 'MR_ERR_PAYLOAD_TOO_LARGE',
        request: async () => {
          const body = Buffer.alloc(1_048_577, 0x61);
          return { path: '/hooks/standard', body, headers: standardHeaders(body, 'm8') };
        },
      },
      {
        title: 'a GET on a hook is 405 with Allow: POST',
        status: 405,
        code: 'MR_ERR_METHOD_NOT_ALLOWED',
        request: async () => ({ path: '/hooks/standard', method: 'GET' }),
      },
    ];

    it.skipIf(!harness.isAvailable).each(cases)('$title', async ({ status, code, request }) => {
      const { url, harnessStore } = await setup();
      const { path, method, body, headers } = await request();
      const response = await send(url, path, { method, body, headers });
      expect(response.status, response.text).toBe(status);
      expect(response.json).toEqual({ error: { code, message: expect.any(String) } });
      if (status === 405) expect(response.headers.allow).toBe('POST');
      for (const secret of Object.values(SECRETS)) expect(response.text).not.toContain(secret);
      expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
    });

    it.skipIf(!harness.isAvailable)('stops reading a chunked body at the limit and answers 413', async () => {
      const { url, harnessStore } = await setup();
      const { request } = await import('node:http');
      const response = await new Promise<number>((resolve, reject) => {
        // Well-formed signature headers (for another body): only the body can refuse them.
        const headers = { ...standardHeaders(Buffer.from('{}'), 'm-chunked'), 'transfer-encoding': 'chunked' };
        const req = request(new URL('/hooks/small', url), { method: 'POST', agent: false, headers }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        });
        req.on('error', reject);
        req.write(Buffer.alloc(SMALL_LIMIT_BYTES, 0x61));
        req.write(Buffer.alloc(10, 0x61));
        // Never ended: the server must answer without waiting for the rest.
      });
      expect(response).toBe(413);
      expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
    });
  });

  it.skipIf(!harness.isAvailable)('serves /healthz, /readyz (store ping) and /metrics, and 404s any other path', async () => {
    const { url } = await setup();
    expect((await send(url, '/healthz', { method: 'GET' })).json).toEqual({ status: 'ok' });
    expect((await send(url, '/readyz', { method: 'GET' })).json).toEqual({ status: 'ready' });
    const metrics = await send(url, '/metrics', { method: 'GET' });
    expect(metrics.status).toBe(200);
    expect(metrics.headers['content-type']).toContain('text/plain');
    const missing = await send(url, '/nothing', { method: 'GET' });
    expect(missing.status).toBe(404);
    expect(missing.json.error.code).toBe('MR_ERR_NOT_FOUND');
    expect((await send(url, '/healthz', { method: 'POST', body: '' })).status).toBe(405);
  });
});
