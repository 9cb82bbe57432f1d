// Structured logs: JSON lines, secrets and signatures redacted wherever the common shapes
// put them, configured payload paths redacted, pretty output only on a terminal, and one
// line per job state change carrying the job's id, type and attempt.

import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../src/log.js';
import { SECRET_HEADERS } from '../src/providers/index.js';
import { Mailroom } from '../src/mailroom.js';
import { Permanent } from '../src/core/errors.js';
import { createIngressServer } from '../src/ingress/server.js';
import { configureProvider } from '../src/providers/index.js';
import { validateConfig } from '../src/config/validate-config.js';
import { postHook } from './ingress/ingress-kit.js';
import { closeTestMailrooms } from './harness/mailroom.js';
import { sqliteHarness } from './harness/sqlite.js';
import { jsonLines, logSink as sink } from './harness/log-sink.js';
import { waitFor, waitForEvent } from './harness/wait.js';

const SIGNATURE = 't=1700000000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd';
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('log redaction', () => {
  it('removes signature headers, authorization, cookies and secrets from a logged request', () => {
    const out = sink();
    const log = createLogger({ destination: out, level: 'info' });
    log.info(
      {
        source: 'stripe',
        headers: { 'stripe-signature': SIGNATURE, authorization: 'Bearer tok_live_123', cookie: 'mr_session=abc', 'content-type': 'application/json' },
        req: { headers: { 'x-hub-signature-256': `sha256=${'a'.repeat(64)}`, 'webhook-signature': 'v1,c2lnbmF0dXJl', 'x-slack-signature': 'v0=deadbeef' } },
        config: { secret: SECRET, secrets: [SECRET], token: 'dash_token_1' },
        secret: SECRET,
      },
      'webhook received',
    );
    const text = out.text();
    for (const leaked of [SIGNATURE, 'tok_live_123', 'mr_session=abc', SECRET, 'a'.repeat(64), 'c2lnbmF0dXJl', 'deadbeef', 'dash_token_1']) {
      expect(text).not.toContain(leaked);
    }
    const [line] = jsonLines(text);
    expect(line!.headers).toEqual({ 'stripe-signature': '[redacted]', authorization: '[redacted]', cookie: '[redacted]', 'content-type': 'application/json' });
    expect(line!.req.headers['x-hub-signature-256']).toBe('[redacted]');
    expect(line!.msg).toBe('webhook received');
  });

  it("redacts every signature and credential header in every provider's spelling, at the top and one level down", () => {
    const out = sink();
    const log = createLogger({ destination: out });
    const headers = Object.fromEntries(SECRET_HEADERS.map((name) => [name, `leaked-${name}`]));
    expect(headers).toHaveProperty('shopify-hmac-sha256');
    log.info({ headers: { ...headers, 'x-shopify-topic': 'orders/create' }, event: { headers } }, 'webhook refused');
    expect(out.text()).not.toContain('leaked-');
    const [line] = jsonLines(out.text());
    expect(line!.headers['shopify-hmac-sha256']).toBe('[redacted]');
    expect(line!.headers['x-shopify-topic']).toBe('orders/create');
  });

  it('refuses an unknown level naming MAILROOM_LOG_LEVEL and the levels it takes', () => {
    expect(() => createLogger({ level: 'bogus', destination: sink() })).toThrow('The log level must be one of fatal, error, warn, info, debug, trace, silent, not "bogus" (MAILROOM_LOG_LEVEL, or the logger\'s level option).');
    expect(createLogger({ level: 'debug', destination: sink() }).level).toBe('debug');
  });

  it("drops the rawPacket of node's HTTP parser errors from a logged error", () => {
    const out = sink();
    const error = Object.assign(new Error('Parse Error: Invalid header token'), {
      code: 'HPE_INVALID_HEADER_TOKEN',
      rawPacket: Buffer.from('POST / HTTP/1.1\r\nauthorization: Bearer tok_live_123\r\n'),
    });
    createLogger({ destination: out }).info({ err: error }, 'malformed HTTP request');
    expect(out.text()).not.toContain('rawPacket');
    expect(jsonLines(out.text())[0]!.err).toMatchObject({ code: 'HPE_INVALID_HEADER_TOKEN', message: 'Parse Error: Invalid header token' });
  });

  it('redacts configured payload paths and leaves the rest of the payload readable', () => {
    const out = sink();
    const log = createLogger({ destination: out, redactPaths: ['payload.card.number', 'payload.customer.email'] });
    log.info({ jobId: '7', payload: { card: { number: '4242424242424242', brand: 'visa' }, customer: { email: 'ada@example.com' } } }, 'job payload');
    const text = out.text();
    expect(text).not.toContain('4242424242424242');
    expect(text).not.toContain('ada@example.com');
    expect(jsonLines(text)[0]!.payload.card).toEqual({ number: '[redacted]', brand: 'visa' });
  });

  it('writes pretty lines to a terminal and JSON to anything else, redacting both', () => {
    const terminal = sink(true);
    createLogger({ destination: terminal }).info({ headers: { 'stripe-signature': SIGNATURE } }, 'to a person');
    expect(terminal.text()).toContain('to a person');
    expect(terminal.text()).not.toContain(SIGNATURE);
    expect(() => JSON.parse(terminal.text().trim().split('\n')[0]!)).toThrow();

    const pipe = sink(false);
    createLogger({ destination: pipe }).info('to a machine');
    expect(jsonLines(pipe.text())[0]).toMatchObject({ msg: 'to a machine', name: 'mailroom', level: 30 });
  });
});

describe('job state change lines', () => {
  afterEach(async () => closeTestMailrooms(sqliteHarness));

  it('logs each transition with job id, type and attempt, and the duration of a success', async () => {
    const out = sink();
    const { store } = await sqliteHarness.open();
    const mr = await Mailroom.open({ store, logger: createLogger({ destination: out, level: 'debug' }) });
    try {
      let calls = 0;
      mr.task('flaky', { maxAttempts: 3, backoff: { baseMs: 1, capMs: 1, jitter: 'none' }, async run() {
        calls++;
        if (calls === 1) throw new Error('smtp 421');
      } });
      mr.task('doomed', async () => {
        throw new Permanent('no such order');
      });
      const flaky = await mr.enqueue('flaky', { to: 'ada@example.com' });
      const doomed = await mr.enqueue('doomed', {});
      const worker = mr.work({ pollMs: 10 });
      // drained() does not wait for a retry that is not due yet: wait for the second attempt.
      await waitFor(async () => (await mr.getJob(flaky.id))?.status === 'done', { description: 'the retry to succeed' });
      await worker.drained();
      await worker.stop();
      const lines = jsonLines(out.text());
      const of = (id: string) => lines.filter((l) => l.jobId === id);

      const failed = of(flaky.id).find((l) => l.msg === 'job failed; will retry');
      expect(failed).toMatchObject({ type: 'flaky', attempt: 1, error: 'Error: smtp 421', level: 30 });
      const done = of(flaky.id).find((l) => l.msg === 'job done after failing');
      expect(done).toMatchObject({ type: 'flaky', attempt: 2, level: 30 });
      expect(typeof done!.durationMs).toBe('number');
      const dead = of(doomed.id).find((l) => l.msg === 'job dead');
      expect(dead).toMatchObject({ type: 'doomed', attempt: 1, level: 40 });
      expect(dead!.error).toContain('no such order');
      // Payloads are not logged on transitions.
      expect(out.text()).not.toContain('ada@example.com');
    } finally {
      await mr.close();
    }
  });

  it('puts the outcome and the duration on failed, dead and done lines', async () => {
    const out = sink();
    const { store } = await sqliteHarness.open();
    const mr = await Mailroom.open({ store, logger: createLogger({ destination: out, level: 'debug' }) });
    try {
      let calls = 0;
      mr.task('twice', { maxAttempts: 2, backoff: { baseMs: 1, capMs: 1, jitter: 'none' }, async run() {
        calls++;
        throw new Error(`boom ${calls}`);
      } });
      mr.task('fine', async () => undefined);
      const twice = await mr.enqueue('twice', {});
      const fine = await mr.enqueue('fine', {});
      const worker = mr.work({ pollMs: 10 });
      // drained() does not wait for a retry that is not due yet: wait for the second attempt.
      await waitForEvent(worker, 'dead');
      await worker.drained();
      await worker.stop();
      const lines = jsonLines(out.text());
      const failed = lines.find((l) => l.jobId === twice.id && l.msg === 'job failed; will retry');
      expect(failed).toMatchObject({ outcome: 'failed', attempt: 1 });
      expect(typeof failed!.durationMs).toBe('number');
      const dead = lines.find((l) => l.jobId === twice.id && l.msg === 'job dead');
      expect(dead).toMatchObject({ outcome: 'dead', attemptOutcome: 'failed', attempt: 2 });
      expect(typeof dead!.durationMs).toBe('number');
      const done = lines.find((l) => l.jobId === fine.id && l.msg === 'job done');
      expect(done).toMatchObject({ outcome: 'done' });
    } finally {
      await mr.close();
    }
  });
});

describe('what the default level shows', () => {
  afterEach(async () => closeTestMailrooms(sqliteHarness));

  it('logs a job that succeeds after failing at info, and a first-try success not at all', async () => {
    const out = sink();
    const { store } = await sqliteHarness.open();
    const mr = await Mailroom.open({ store, logger: createLogger({ destination: out }) });
    try {
      let calls = 0;
      mr.task('forward', { backoff: { baseMs: 1, capMs: 1, jitter: 'none' }, async run() {
        calls++;
        if (calls <= 2) throw new Error('connect ECONNREFUSED');
      } });
      mr.task('fine', async () => undefined);
      const recovered = await mr.enqueue('forward', {});
      const fine = await mr.enqueue('fine', {});
      const worker = mr.work({ pollMs: 10 });
      await waitFor(async () => (await mr.getJob(recovered.id))?.status === 'done', { description: 'the third attempt to succeed' });
      await worker.drained();
      await worker.stop();
      const lines = jsonLines(out.text());
      expect(lines.filter((l) => l.jobId === recovered.id && l.level === 30).map((l) => l.msg)).toEqual([
        'job failed; will retry',
        'job failed; will retry',
        'job done after failing',
      ]);
      expect(lines.find((l) => l.msg === 'job done after failing')).toMatchObject({ type: 'forward', attempt: 3, outcome: 'done' });
      expect(lines.filter((l) => l.jobId === fine.id)).toEqual([]);
    } finally {
      await mr.close();
    }
  });

  it('logs one info line per accepted webhook with its source, delivery id, type and jobs, and never its signature', async () => {
    const out = sink();
    const { store } = await sqliteHarness.open();
    const log = createLogger({ destination: out });
    const mr = await Mailroom.open({ store, logger: log });
    const config = validateConfig({ sources: { github: { provider: 'github', secrets: ['gh-secret'], tasks: [{ task: 'deploy', events: ['push'] }] } } });
    const ingress = createIngressServer({ mr, config, logger: log });
    try {
      const url = await ingress.listen(0, '127.0.0.1');
      const github = configureProvider(config.sources!.github!, 'sources.github');
      const post = async (deliveryId: string, eventType: string) => {
        const rawBody = Buffer.from(JSON.stringify({ ref: 'refs/heads/main' }));
        const headers: Record<string, string> = { 'content-type': 'application/json', ...github.sign({ rawBody, now: new Date(), deliveryId, eventType }) };
        return { status: (await postHook(url, 'github', rawBody, headers)).status, signature: headers['x-hub-signature-256'] };
      };
      const push = await post('d-push', 'push');
      const ping = await post('d-ping', 'ping');
      const again = await post('d-push', 'push');
      expect([push.status, ping.status, again.status]).toEqual([202, 202, 200]);
      const accepted = jsonLines(out.text()).filter((l) => l.source === 'github' && l.level === 30);
      expect(accepted.map((l) => [l.msg, l.deliveryId, l.type, l.jobs, l.status])).toEqual([
        ['webhook stored', 'd-push', 'push', 1, 202],
        ['webhook stored', 'd-ping', 'ping', 0, 202],
        ['webhook redelivered: already stored', 'd-push', 'push', 1, 200],
      ]);
      expect(out.text()).not.toContain(push.signature!);
    } finally {
      await ingress.close();
      await mr.close();
    }
  });
});
