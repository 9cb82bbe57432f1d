// Config files: loading (.mjs, .js, explicit path, none), validation errors that name the
// exact key, and openMailroomFromConfig registering every task kind with its policy.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PortalSigner } from '../../src/portal/portal-signer.js';
import { defineConfig } from '../../src/index.js';
import { ConfigError } from '../../src/core/errors.js';
import { loadConfig } from '../../src/config/load-config.js';
import { openMailroomFromConfig } from '../../src/config/open-mailroom.js';
import { validateConfig } from '../../src/config/validate-config.js';
import { Mailroom } from '../../src/mailroom.js';
import { waitFor } from '../harness/wait.js';

const dirs: string[] = [];
const opened: Mailroom[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-config-'));
  dirs.push(dir);
  return dir;
}

afterEach(async () => {
  for (const mr of opened.splice(0)) await mr.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function configErrorKey(raw: unknown): string {
  try {
    validateConfig(raw);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as ConfigError).key;
  }
  throw new Error('expected a ConfigError');
}

describe('config validation', () => {
  it.each([
    [{ sources: { stripe: { provider: 'strype', secrets: ['x'] } } }, 'sources.stripe.provider'],
    [{ sources: { stripe: { provider: 'stripe', secrets: [undefined] } } }, 'sources.stripe.secrets[0]'],
    [{ sources: { stripe: { provider: 'stripe' } } }, 'sources.stripe.secrets'],
    [{ sources: { ci: { provider: 'hmac', secrets: ['s'], options: { header: 'x', algorithm: 'md5' } } } }, 'sources.ci.options.algorithm'],
    [{ sources: { gh: { provider: 'github', secrets: ['s'], tasks: [{ task: 'deploy', group: 'customer' }] } } }, 'sources.gh.tasks[0].group'],
    [{ sources: { gh: { provider: 'github', secrets: ['s'], tasks: [{ events: ['push'] }] } } }, 'sources.gh.tasks[0].task'],
    [{ sources: { gh: { provider: 'github', secrets: ['s'], bodyLimitBytes: -1 } } }, 'sources.gh.bodyLimitBytes'],
    [{ sources: { 'a/b': { provider: 'none' } } }, 'sources.a/b'],
    [{ tasks: { f: { kind: 'forward', url: 'ftp://x' } } }, 'tasks.f.url'],
    [{ tasks: { f: { kind: 'forward', url: 'http://x', secret: 'plain' } } }, 'tasks.f.secret'],
    [{ tasks: { e: { kind: 'exec', command: [] } } }, 'tasks.e.command'],
    [{ tasks: { e: { kind: 'exec', command: ['x'], permanentExitCodes: [0] } } }, 'tasks.e.permanentExitCodes[0]'],
    [{ tasks: { m: { module: './m.js', maxAttempts: 0 } } }, 'tasks.m.maxAttempts'],
    [{ tasks: { m: { module: './m.js', backoff: { jitter: 'some' } } } }, 'tasks.m.backoff.jitter'],
    [{ tasks: { x: { kind: 'cron' } } }, 'tasks.x.kind'],
    [{ tasks: { f: { kind: 'forward', url: 'http://x', urll: 'typo' } } }, 'tasks.f.urll'],
    [{ server: { port: 70_000 } }, 'server.port'],
    [{ worker: { prefetch: -1 } }, 'worker.prefetch'],
    [{ worker: { concurrency: 0 } }, 'worker.concurrency'],
    [{ sourcess: {} }, 'sourcess'],
    [{ schedules: { nightly: { cron: 'every night', task: 'report' } } }, 'schedules.nightly.cron'],
    [{ schedules: { nightly: { cron: '0 3 * * *' } } }, 'schedules.nightly.task'],
    [{ schedules: { nightly: { cron: '0 3 * * *', task: 'report', tz: 'UTC' } } }, 'schedules.nightly.tz'],
    [{ endpoints: { allowlist: ['127.0.0.1', '10.0.0.0/33'] } }, 'endpoints.allowlist[1]'],
    [{ endpoints: { allowlist: 'localhost' } }, 'endpoints.allowlist'],
    [{ endpoints: { tenantAllowlist: ['127.0.0.1', 'not a host/8'] } }, 'endpoints.tenantAllowlist[1]'],
    [{ endpoints: { tenantAllowlist: '10.0.0.0/8' } }, 'endpoints.tenantAllowlist'],
    [{ endpoints: { concurrency: 0 } }, 'endpoints.concurrency'],
    [{ endpoints: { requestTimeoutMs: '30s' } }, 'endpoints.requestTimeoutMs'],
    [{ endpoints: { rate: { limit: 10 } } }, 'endpoints.rate.intervalMs'],
    [{ endpoints: { retryScheduleMs: [] } }, 'endpoints.retryScheduleMs'],
    [{ endpoints: { breaker: { failureRatio: 1.5 } } }, 'endpoints.breaker.failureRatio'],
    [{ endpoints: { breaker: { openMS: 1_000 } } }, 'endpoints.breaker.openMS'],
    [{ endpoints: { queue: '' } }, 'endpoints.queue'],
    [{ endpoints: { deliver: 'yes' } }, 'endpoints.deliver'],
    [{ endpoints: { resolve: () => [] } }, 'endpoints.resolve'],
    [{ metrics: { endpointTopN: -1 } }, 'metrics.endpointTopN'],
    [{ metrics: { processMetrics: 'no' } }, 'metrics.processMetrics'],
    [{ metrics: { topN: 5 } }, 'metrics.topN'],
  ])('names the bad key in %j', (raw, key) => {
    expect(configErrorKey(raw)).toBe(key);
  });

  it('refuses a forward URL with a user name or password, without showing the password', () => {
    let thrown: unknown;
    try {
      validateConfig({ tasks: { f: { kind: 'forward', url: 'http://app:PASSWORD123@127.0.0.1:3000/hook' } } });
    } catch (error) {
      thrown = error;
    }
    expect(String((thrown as Error).message)).toMatch(/tasks\.f\.url.*user name or password.*authorization/);
    expect(String((thrown as Error).message)).not.toContain('PASSWORD123');
  });

  it('accepts unset source secrets when they are not required, keeps none, and still checks provider and options', () => {
    const raw = { sources: { stripe: { provider: 'stripe', secrets: [undefined], tasks: ['fulfil'] } } };
    const config = validateConfig(raw, { requireSourceSecrets: false });
    expect(config.sources!.stripe).toEqual({ provider: 'stripe', tasks: ['fulfil'] });
    expect(() => validateConfig({ sources: { s: { provider: 'strype' } } }, { requireSourceSecrets: false })).toThrow(/sources\.s\.provider/);
    expect(() => validateConfig({ sources: { ci: { provider: 'hmac', options: { header: 'x', algorithm: 'md5' } } } }, { requireSourceSecrets: false })).toThrow(
      /sources\.ci\.options\.algorithm/,
    );
    expect(configErrorKey(raw)).toBe('sources.stripe.secrets[0]');
  });

  it('accepts the SPEC example shape and defineConfig returns its argument', () => {
    const config = defineConfig({
      db: 'sqlite:./data/mailroom.db',
      server: { host: '127.0.0.1', port: 8080, bodyLimitBytes: 1_048_576 },
      sources: {
        stripe: { provider: 'stripe', secrets: ['whsec_x'], tasks: ['fulfil_order'] },
        github: { provider: 'github', secrets: ['g'], tasks: [{ task: 'deploy', events: ['push'] }] },
      },
      tasks: {
        fulfil_order: { kind: 'forward', url: 'http://127.0.0.1:3000/stripe', maxAttempts: 10 },
        deploy: { kind: 'exec', command: ['./deploy.sh'], timeoutMs: 600_000 },
        send_email: { module: './tasks/send-email.js', queue: 'email' },
      },
      endpoints: { allowlist: [] },
      dashboard: { token: undefined },
      portal: { secret: undefined },
      retention: { doneMs: 7 * 24 * 3600_000 },
    });
    expect(() => validateConfig(config, { baseDir: '/srv/app' })).not.toThrow();
    expect((validateConfig(config, { baseDir: '/srv/app' }).tasks!.send_email as { module: string }).module).toBe('/srv/app/tasks/send-email.js');
  });
});

describe('Mailroom.open endpoints', () => {
  it.each([
    [{ concurency: 5 }, 'endpoints.concurency'],
    // Taken as given, this made a delivery's first failure its last.
    [{ retryScheduleMs: 'x', maxAttempts: 3 }, 'endpoints.retryScheduleMs'],
    [{ allowlist: ['10.0.0.0/33'] }, 'endpoints.allowlist[0]'],
    [{ tenantAllowlist: ['10.0.0.0/33'] }, 'endpoints.tenantAllowlist[0]'],
    [{ rate: { limit: 5 } }, 'endpoints.rate.intervalMs'],
    [{ breaker: { failureRatio: 2 } }, 'endpoints.breaker.failureRatio'],
    [{ resolve: 'dns' }, 'endpoints.resolve'],
  ])('refuses %j with MR_ERR_INVALID_ARGUMENT naming the key, as the config file does', async (endpoints, key) => {
    const opening = Mailroom.open({ db: 'sqlite::memory:', endpoints: endpoints as never });
    await expect(opening).rejects.toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT', message: expect.stringMatching(new RegExp(`^${key.replace(/[.[\]]/g, '\\$&')}: `)) });
    expect(configErrorKey({ endpoints })).toBe(key);
  });
});

describe('portal config', () => {
  it('takes a secret and a base URL, names a bad key, and lets the caller (MAILROOM_PORTAL_SECRET) win over the file', async () => {
    const fileSecret = 'file-secret-0123456789abcdef0123456789';
    const envSecret = 'env-secret-0123456789abcdef01234567890';
    expect(validateConfig({ portal: { secret: fileSecret, baseUrl: 'https://hooks.example.com' } }).portal).toEqual({ secret: fileSecret, baseUrl: 'https://hooks.example.com' });
    expect(() => validateConfig({ portal: { sekret: 'x' } })).toThrow(expect.objectContaining({ key: 'portal.sekret' }));
    expect(() => validateConfig({ portal: { secret: '' } })).toThrow(expect.objectContaining({ key: 'portal.secret' }));
    const mr = await openMailroomFromConfig({
      config: { db: 'sqlite::memory:', portal: { secret: fileSecret, baseUrl: 'https://hooks.example.com' } },
      open: { portal: { secret: envSecret } },
    });
    try {
      const token = (await mr.portal.link('acme')).replace('https://hooks.example.com/portal/enter/', '');
      expect(new PortalSigner(envSecret).verifyLink(token, Date.now())?.tenant).toBe('acme');
      expect(new PortalSigner(fileSecret).verifyLink(token, Date.now())).toBeNull();
    } finally {
      await mr.close();
    }
  });
});

describe('loadConfig', () => {
  it('returns null when there is no file and no path', async () => {
    expect(await loadConfig({ cwd: tempDir() })).toBeNull();
  });

  it('loads mailroom.config.mjs from the cwd and a plain object default export', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'mailroom.config.mjs'), "export default { sources: { gh: { provider: 'github', secrets: ['s'] } } };\n");
    const config = await loadConfig({ cwd: dir });
    expect(config?.sources?.gh?.provider).toBe('github');
  });

  it('loads an explicit --config path and refuses one that does not exist', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'other.mjs'), 'export default { db: "sqlite::memory:" };\n');
    expect((await loadConfig({ cwd: dir, path: 'other.mjs' }))?.db).toBe('sqlite::memory:');
    await expect(loadConfig({ cwd: dir, path: 'missing.mjs' })).rejects.toMatchObject({ key: '--config' });
  });

  it('fails naming the key when the file holds an invalid config, and names config when it has no default export', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.mjs'), "export default { sources: { s: { provider: 'nope' } } };\n");
    await expect(loadConfig({ cwd: dir, path: 'bad.mjs' })).rejects.toMatchObject({ key: 'sources.s.provider' });
    writeFileSync(join(dir, 'empty.mjs'), 'export const x = 1;\n');
    await expect(loadConfig({ cwd: dir, path: 'empty.mjs' })).rejects.toMatchObject({ key: 'config' });
  });
});

describe('openMailroomFromConfig', () => {
  it('registers forward, exec and module tasks with their policies, and module tasks run', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'hello.mjs'), "export default { maxAttempts: 2, queue: 'mail', run: async (payload) => { globalThis.__helloRan = payload; } };\n");
    writeFileSync(join(dir, 'fn.mjs'), 'export default async () => {};\n');
    writeFileSync(
      join(dir, 'mailroom.config.mjs'),
      `export default {
        tasks: {
          hello: { module: './hello.mjs', maxAttempts: 4 },
          plain: { module: './fn.mjs' },
          fwd: { kind: 'forward', url: 'http://127.0.0.1:9/x' },
          sh: { kind: 'exec', command: ['true'], queue: 'ops' },
        },
      };\n`,
    );
    const config = await loadConfig({ cwd: dir });
    const mr = await openMailroomFromConfig({ config, db: 'sqlite::memory:' });
    opened.push(mr);
    expect(mr.taskTypes().sort()).toEqual(['fwd', 'hello', 'plain', 'sh']);
    // Config wins over the module's own maxAttempts; the module's queue stays.
    const hello = await mr.enqueue('hello', { n: 1 });
    expect(hello.maxAttempts).toBe(4);
    expect(hello.queue).toBe('mail');
    expect((await mr.enqueue('fwd', {})).maxAttempts).toBe(8);
    expect((await mr.enqueue('sh', {})).queue).toBe('ops');
    const worker = mr.work({ queues: ['mail'], pollMs: 10 });
    await waitFor(async () => (await mr.getJob(hello.id))?.status === 'done', { description: 'the module task to finish' });
    expect((globalThis as { __helloRan?: unknown }).__helloRan).toEqual({ n: 1 });
    await worker.stop();
  });

  it('gives outgoing deliveries the endpoints settings of the file: queue, attempts, schedule, limits and breaker', async () => {
    const endpoints = {
      allowlist: ['127.0.0.1'],
      queue: 'webhooks',
      maxAttempts: 3,
      retryScheduleMs: [1_000, 60_000],
      concurrency: 4,
      rate: { limit: 50, intervalMs: 1_000 },
      requestTimeoutMs: 10_000,
      breaker: { failureRatio: 0.8, openMs: 30_000 },
    };
    const config = validateConfig({ endpoints });
    expect(config.endpoints).toEqual(endpoints);
    const mr = await openMailroomFromConfig({ config, db: 'sqlite::memory:' });
    opened.push(mr);
    // A worker started before the first endpoint exists delivers all the same.
    expect(mr.isDelivering).toBe(true);
    await mr.endpoints.add({ tenant: 'acme', url: 'http://127.0.0.1:9/hook' });
    await mr.publish('invoice.paid', { n: 1 }, { tenant: 'acme' });
    const [job] = await mr.listJobs({ type: 'deliver' });
    expect(job).toMatchObject({ queue: 'webhooks', maxAttempts: 3 });
  });

  it('leaves deliveries to the store’s endpoints when the config has no endpoints section, or says so', async () => {
    for (const raw of [{}, { endpoints: { deliver: 'auto' } }, { endpoints: { deliver: false } }]) {
      const mr = await openMailroomFromConfig({ config: validateConfig(raw), db: 'sqlite::memory:' });
      opened.push(mr);
      expect(mr.isDelivering, JSON.stringify(raw)).toBe(false);
    }
  });

  it('names the module key when a task module cannot be loaded', async () => {
    const config = validateConfig({ tasks: { gone: { module: '/nonexistent/task.mjs' } } });
    await expect(openMailroomFromConfig({ config, db: 'sqlite::memory:' })).rejects.toMatchObject({ key: 'tasks.gone.module' });
  });

  it('names the module and the key when a module exports a key a task definition does not take', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'welcome.mjs'), `export default { description: 'welcome email', async run() {} };\n`);
    const config = validateConfig({ tasks: { welcome: { module: join(dir, 'welcome.mjs') } } });
    await expect(openMailroomFromConfig({ config, db: 'sqlite::memory:' })).rejects.toMatchObject({
      key: 'tasks.welcome.module',
      message: expect.stringContaining('exports "description", which a task definition does not take'),
    });
  });
});
