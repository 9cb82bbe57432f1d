// `mailroom endpoints …` and `mailroom deliveries …` on every store, in-process through the
// dispatcher the bin uses: the secret printed once by add and rotate-secret and never by
// anything else, health in get, disable/enable/recover, and deliveries by endpoint and
// message, a worker that delivers with no task configured, and one started on a queue of
// its own before the first endpoint exists (docs/outgoing.md, "Keeping deliveries apart").
// The config's allowlist lets a loopback URL pass the SSRF guard.

import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import pino from 'pino';
import { Mailroom } from '../../src/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { removeTempDirs, runCommand, runJson, startCommand, tempDir } from './run-command.js';
import { waitFor } from '../harness/wait.js';
import { startVerifyingReceiver } from '../outgoing/outgoing-kit.js';
import { DEFAULT_BREAKER_SETTINGS } from '../../src/core/circuit-breaker.js';

/** A working directory whose config allows loopback endpoints. */
function configDir(): string {
  const cwd = tempDir();
  writeFileSync(join(cwd, 'mailroom.config.mjs'), `export default { endpoints: { allowlist: ['127.0.0.1'] } };\n`);
  return cwd;
}

describe.each(storeHarnesses)('mailroom endpoints and deliveries on $name', (harness) => {
  afterEach(async () => {
    await closeTestMailrooms(harness);
    removeTempDirs();
  });

  it.runIf(harness.isAvailable)('adds an endpoint printing its secret once, and never prints it again', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const cwd = configDir();
    const added = await runJson(['endpoints', 'add', '--db', url, '--tenant', 'acme', '--url', 'http://127.0.0.1:9/hooks', '--events', 'invoice.paid,invoice.voided'], { cwd });
    expect(added).toMatchObject({ tenant: 'acme', url: 'http://127.0.0.1:9/hooks', eventTypes: ['invoice.paid', 'invoice.voided'], enabled: true });
    expect(added.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const human = await runCommand(['endpoints', 'add', '--db', url, '--tenant', 'globex', '--url', 'http://127.0.0.1:9/other'], { cwd });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/Signing secret \(shown once; give it to the customer\): whsec_/);
    const humanSecret = /whsec_\S+/.exec(human.stdout)![0];

    await mr.publish('invoice.paid', { invoice: 1 }, { tenant: 'acme' });
    const rotated = await runJson(['endpoints', 'rotate-secret', added.id, '--db', url, '--overlap', '1h'], { cwd });
    expect(rotated.secret).toMatch(/^whsec_/);
    const outputs = [
      await runCommand(['endpoints', 'list', '--db', url], { cwd }),
      await runCommand(['endpoints', 'list', '--db', url, '--json'], { cwd }),
      await runCommand(['endpoints', 'get', added.id, '--db', url], { cwd }),
      await runCommand(['endpoints', 'get', added.id, '--db', url, '--json'], { cwd }),
      await runCommand(['endpoints', 'update', added.id, '--db', url, '--description', 'billing'], { cwd }),
      await runCommand(['deliveries', '--endpoint', added.id, '--db', url], { cwd }),
      await runCommand(['deliveries', '--endpoint', added.id, '--db', url, '--json'], { cwd }),
      await runCommand(['endpoints', 'add', '--db', url, '--tenant', 'acme', '--url', 'http://10.0.0.1/'], { cwd }),
      await runCommand(['endpoints', 'get', '999', '--db', url], { cwd }),
    ];
    expect(outputs.slice(0, 7).map((o) => o.code)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    const shown = outputs.map((o) => o.stdout + o.stderr).join('\n');
    for (const secret of [added.secret, humanSecret, rotated.secret]) expect(shown).not.toContain(secret.slice('whsec_'.length));
    expect(outputs[7]!.code).toBe(1);
    expect(outputs[7]!.stderr).toContain('refused range (private)');
    expect(outputs[8]!.code).toBe(1);
  });

  it.runIf(harness.isAvailable)('says when an open breaker probes next, and that a probe is due once that time has passed', async () => {
    const { mr, url, store } = await openTestMailroom(harness);
    const cwd = configDir();
    // An endpoint whose breaker opened at `at` (outages enough): it may probe a minute later.
    const openedAt = async (tenant: string, at: Date) => {
      const added = await runJson(['endpoints', 'add', '--db', url, '--tenant', tenant, '--url', 'http://127.0.0.1:9/hooks'], { cwd });
      const { deliveries } = await mr.publish('invoice.paid', { invoice: 1 }, { tenant });
      await store.deliveryRecordMany({
        records: Array.from({ length: DEFAULT_BREAKER_SETTINGS.minAttempts }, () => ({ deliveryId: deliveries[0]!.id, endpointId: added.id, status: 'pending', attempt: 'outage' as const })),
        disableAfterMs: 5 * 24 * 3_600_000,
        breaker: DEFAULT_BREAKER_SETTINGS,
        now: at,
      });
      return (await runCommand(['endpoints', 'get', added.id, '--db', url], { cwd })).stdout;
    };
    expect(await openedAt('acme', new Date(Date.now() - 10 * 60_000))).toMatch(/breaker: +open \(probe due since .+: the next delivery tests the endpoint\)/);
    expect(await openedAt('globex', new Date())).toMatch(/breaker: +open \(next probe .+\)/);
  });

  it.runIf(harness.isAvailable)('gets an endpoint with its health, disables, enables and recovers it, and lists deliveries', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const cwd = configDir();
    const added = await runJson(['endpoints', 'add', '--db', url, '--tenant', 'acme', '--url', 'http://127.0.0.1:9/hooks'], { cwd });
    const got = await runJson(['endpoints', 'get', added.id, '--db', url], { cwd });
    expect(got.health).toMatchObject({ breakerState: 'closed', successRate: null, backlog: 0, lastSuccessAt: null });
    const human = await runCommand(['endpoints', 'get', added.id, '--db', url], { cwd });
    expect(human.stdout).toMatch(/breaker: +closed/);
    expect(human.stdout).toMatch(/backlog: +0/);

    const disabled = await runJson(['endpoints', 'disable', added.id, '--db', url, '--reason', 'customer asked'], { cwd });
    expect(disabled).toMatchObject({ enabled: false, disabledReason: 'customer asked' });
    const { message } = await mr.publish('invoice.paid', { invoice: 1 }, { tenant: 'acme' });
    const refused = await runCommand(['endpoints', 'recover', added.id, '--db', url, '--since', '1h'], { cwd });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('is disabled; enable it before you recover');
    expect(await runJson(['endpoints', 'enable', added.id, '--db', url], { cwd })).toMatchObject({ enabled: true, disabledReason: null });
    const skipped = await runJson(['deliveries', '--message', message.id, '--db', url], { cwd });
    // `list` may be said, as for endpoints; anything else is refused.
    expect(await runJson(['deliveries', 'list', '--message', message.id, '--db', url], { cwd })).toEqual(skipped);
    const stray = await runCommand(['deliveries', 'show', '--message', message.id, '--db', url], { cwd });
    expect(stray.code).toBe(2);
    expect(stray.stderr).toContain('Unexpected argument "show"');
    expect(skipped.map((d: { status: string }) => d.status)).toEqual(['skipped']);
    expect(await runJson(['endpoints', 'recover', added.id, '--db', url, '--since', '1h'], { cwd })).toMatchObject({ count: 1 });
    const pending = await runJson(['deliveries', '--endpoint', added.id, '--db', url, '--status', 'pending'], { cwd });
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ messageId: message.id, type: 'invoice.paid', status: 'pending' });
    const table = await runCommand(['deliveries', '--endpoint', added.id, '--db', url], { cwd });
    expect(table.stdout).toMatch(/^ID +MESSAGE +ENDPOINT +TYPE +STATUS/);

    expect((await runCommand(['endpoints', 'remove', added.id, '--db', url], { cwd })).code).toBe(0);
    expect(await mr.endpoints.get(added.id)).toBeNull();
    const usage = await runCommand(['deliveries', '--db', url], { cwd });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('Give one of --endpoint ID or --message ID.');
  });

  it.runIf(harness.isAvailable)('rotates one secret at a time, saying until when the old one signs, and takes a rate limit and metadata', async () => {
    const { url } = await openTestMailroom(harness);
    const cwd = configDir();
    const added = await runJson(
      ['endpoints', 'add', '--db', url, '--tenant', 'acme', '--url', 'http://127.0.0.1:9/hooks', '--rate-limit', '100/1m', '--metadata', '{"plan":"pro"}'],
      { cwd },
    );
    expect(added).toMatchObject({ rateLimit: { limit: 100, intervalMs: 60_000 }, metadata: { plan: 'pro' }, addedBy: 'operator', disabledBy: null });
    const shown = (await runCommand(['endpoints', 'get', added.id, '--db', url], { cwd })).stdout;
    expect(shown).toMatch(/rate limit: +100\/1m \(deliveries started in any 1m\)/);
    expect(shown).toMatch(/added by: +the operator/);
    const cleared = await runJson(['endpoints', 'update', added.id, '--db', url, '--rate-limit', 'none', '--metadata', 'null'], { cwd });
    expect(cleared).toMatchObject({ rateLimit: null, metadata: null });
    // --events '*' is every type, as the list shows it: it clears a filter.
    expect(await runJson(['endpoints', 'update', added.id, '--db', url, '--events', 'invoice.paid, invoice.failed'], { cwd })).toMatchObject({ eventTypes: ['invoice.paid', 'invoice.failed'] });
    expect(await runJson(['endpoints', 'update', added.id, '--db', url, '--events', '*'], { cwd })).toMatchObject({ eventTypes: null });
    const listedAll = await runCommand(['endpoints', 'list', '--db', url], { cwd });
    expect(listedAll.stdout).toMatch(new RegExp(`^${added.id} .* \\* `, 'm'));
    const gap = await runCommand(['endpoints', 'update', added.id, '--db', url, '--events', 'a,,b'], { cwd });
    expect(gap.code).toBe(2);
    expect(gap.stderr).toContain('--events takes a comma-separated list such as invoice.paid,invoice.failed, not "a,,b".');
    // Values the library refuses are the command line's mistakes too: exit 2.
    for (const [tenant, target, says] of [['acme', 'notaurl', 'url must be'], ['', 'http://127.0.0.1:9/x', 'tenant must be']]) {
      const refused = await runCommand(['endpoints', 'add', '--db', url, '--tenant', tenant!, '--url', target!], { cwd });
      expect(refused.code, says).toBe(2);
      expect(refused.stderr).toContain(says);
    }
    expect((await runCommand(['stats', '--db', 'mysql://x'], { cwd })).code).toBe(2);
    const nothing = await runCommand(['endpoints', 'update', added.id, '--db', url], { cwd });
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('needs something to change');
    for (const bad of [['--rate-limit', '100'], ['--rate-limit', '0/1m'], ['--metadata', '[1]'], ['--rate-limit', 'none']]) {
      const refused = await runCommand(['endpoints', 'add', '--db', url, '--tenant', 'acme', '--url', 'http://127.0.0.1:9/x', ...bad], { cwd });
      expect(refused.code, bad.join(' ')).toBe(2);
    }

    const before = Date.now();
    const first = await runCommand(['endpoints', 'rotate-secret', added.id, '--db', url, '--overlap', '1h'], { cwd });
    expect(first.code).toBe(0);
    const until = new Date(/until (\S+)\.$/m.exec(first.stdout)![1]!).getTime();
    expect(until).toBeGreaterThanOrEqual(before + 3_600_000 - 1_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 3_600_000 + 1_000);
    const second = await runCommand(['endpoints', 'rotate-secret', added.id, '--db', url, '--overlap', '1h'], { cwd });
    expect(second.code).toBe(1);
    expect(second.stderr).toContain(`still signs until ${new Date(until).toISOString()}`);
    expect(second.stdout).not.toContain('whsec_');
    const now = await runCommand(['endpoints', 'rotate-secret', added.id, '--db', url, '--overlap', '0s'], { cwd });
    expect(now.code).toBe(0);
    expect(now.stdout).toContain('Every earlier secret stopped signing now.');
  });

  it.runIf(harness.isAvailable)('says what is missing: an unknown endpoint, a tenant with none, a recover from the future', async () => {
    const { url } = await openTestMailroom(harness);
    const cwd = configDir();
    const added = await runJson(['endpoints', 'add', '--db', url, '--tenant', 'acme', '--url', 'http://127.0.0.1:9/hooks'], { cwd });
    for (const argv of [['endpoints', 'get', '999'], ['deliveries', '--endpoint', '999'], ['deliveries', '--endpoint', '999', '--json'], ['endpoints', 'disable', '999']]) {
      const missing = await runCommand([...argv, '--db', url], { cwd });
      expect(missing.code, argv.join(' ')).toBe(1);
      expect(missing.stderr, argv.join(' ')).toContain('No endpoint with id 999; run `mailroom endpoints list` to list ids.');
    }
    expect((await runCommand(['deliveries', '--endpoint', added.id, '--db', url], { cwd })).stdout).toContain('No deliveries match.');
    for (const argv of [['deliveries', '--message', '999'], ['deliveries', '--message', '999', '--json']]) {
      const missing = await runCommand([...argv, '--db', url], { cwd });
      expect(missing.code, argv.join(' ')).toBe(1);
      expect(missing.stderr, argv.join(' ')).toContain("No outgoing message with id 999; run `mailroom deliveries --endpoint ID` to list an endpoint's messages.");
    }
    const none = await runCommand(['endpoints', 'list', '--tenant', 'globex', '--db', url], { cwd });
    expect(none.stdout).toContain('Tenant globex has no endpoints');
    const future = await runCommand(['endpoints', 'recover', added.id, '--db', url, '--since', '2999-01-01T00:00:00Z'], { cwd });
    expect(future.code).toBe(2);
    expect(future.stderr).toContain('is in the future');
    // A word is refused naming both forms --since takes, not durations alone.
    const word = await runCommand(['endpoints', 'recover', added.id, '--db', url, '--since', 'yesterday'], { cwd });
    expect(word.code).toBe(2);
    expect(word.stderr).toContain('--since takes an ISO time such as 2026-11-01T00:00:00Z, or a duration back from now such as 24h or 7d, not "yesterday".');
  });

  it.runIf(harness.isAvailable)('runs a worker with no configured tasks when the store has an endpoint, and it delivers', async () => {
    const target = await startVerifyingReceiver();
    try {
      const { mr, url } = await openTestMailroom(harness);
      const cwd = configDir();
      const added = await runJson(['endpoints', 'add', '--db', url, '--tenant', 'acme', '--url', target.url], { cwd });
      target.secrets.push(added.secret);
      const worker = startCommand(['worker', '--db', url, '--poll', '20ms', '--shutdown-timeout', '2s'], { cwd });
      const { message } = await mr.publish('invoice.paid', { invoice: 1 }, { tenant: 'acme' });
      await waitFor(async () => (await mr.deliveries.list({ messageId: message.id }))[0]?.status === 'delivered', { timeoutMs: 10_000 });
      worker.signal('SIGTERM');
      expect((await worker.done).code).toBe(0);
      expect(target.received.map((r) => r.verifiedWith)).toEqual([added.secret]);
    } finally {
      await target.close();
    }
  });

  it.runIf(harness.isAvailable)('runs a worker on the deliveries’ own queue, started before any endpoint exists, and it delivers', async () => {
    const target = await startVerifyingReceiver();
    const { url } = await openTestMailroom(harness);
    const cwd = tempDir();
    writeFileSync(join(cwd, 'mailroom.config.mjs'), `export default { endpoints: { allowlist: ['127.0.0.1'], queue: 'webhooks' } };\n`);
    const worker = startCommand(['worker', '--db', url, '--queues', 'webhooks', '--poll', '20ms', '--shutdown-timeout', '2s'], { cwd, env: { MAILROOM_LOG_LEVEL: 'info' } });
    const app = await Mailroom.open({ db: url, migrate: false, logger: pino({ level: 'silent' }), endpoints: { allowlist: ['127.0.0.1'], queue: 'webhooks' } });
    try {
      await waitFor(() => worker.stdout().includes('worker started'), { description: 'the worker to start' });
      expect(worker.stdout()).toContain('"delivers":true');
      const endpoint = await app.endpoints.add({ tenant: 'acme', url: target.url });
      target.secrets.push(endpoint.secret);
      const { message, deliveries } = await app.publish('invoice.paid', { invoice: 1 }, { tenant: 'acme' });
      expect((await app.getJob(deliveries[0]!.jobId!))?.queue).toBe('webhooks');
      await waitFor(async () => (await app.deliveries.list({ messageId: message.id }))[0]?.status === 'delivered', { timeoutMs: 10_000 });
      expect(target.received.map((r) => r.verifiedWith)).toEqual([endpoint.secret]);
    } finally {
      worker.signal('SIGTERM');
      await app.close();
      await target.close();
    }
    expect((await worker.done).code).toBe(0);
  });
});
