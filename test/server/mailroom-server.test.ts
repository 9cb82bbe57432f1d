// The serve process composed without the CLI (src/server/mailroom-server.ts): it listens,
// runs what the webhooks fan out to, mounts extra routes, stops gracefully on a signal,
// and leaves nothing running when its port cannot be bound.

import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/validate-config.js';
import { sendJson } from '../../src/ingress/http-errors.js';
import { startMailroomServer } from '../../src/server/mailroom-server.js';
import { openResources } from '../harness/leak-guard.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';
import { send } from '../ingress/ingress-kit.js';

const config = validateConfig({ sources: { open: { provider: 'none', options: { idPath: '$.id' }, tasks: ['record'] } } });

describe.each(storeHarnesses)('the serve process on $name', (harness) => {
  afterEach(() => closeTestMailrooms(harness));

  it.skipIf(!harness.isAvailable)('stores a webhook, runs its job, serves a mounted route, and stops on a signal', async () => {
    const { mr } = await openTestMailroom(harness);
    const seen: unknown[] = [];
    mr.task('record', async (payload) => void seen.push(payload));
    const server = await startMailroomServer({
      mr,
      config,
      port: 0,
      routes: [{ path: '/extra', methods: ['GET'], handle: (_req, res) => sendJson(res, 200, { ok: true }) }],
    });
    const posted = await send(server.url, '/hooks/open', { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ id: 'evt_1', n: 1 }) });
    expect(posted.status).toBe(202);
    await waitFor(() => seen.length === 1, { timeoutMs: 5_000 });
    expect(seen).toEqual([{ id: 'evt_1', n: 1 }]);
    expect((await send(server.url, '/extra', { method: 'GET' })).json).toEqual({ ok: true });

    let raise!: (signal: NodeJS.Signals) => void;
    const stopped = server.stopOn(new Promise<NodeJS.Signals>((resolve) => (raise = resolve)), { timeoutMs: 2_000 });
    raise('SIGTERM');
    expect(await stopped).toBe('SIGTERM');
    expect(server.ingress.server.listening).toBe(false);
    expect(openResources().map((resource) => resource.kind)).not.toContain('worker');
  });

  it.skipIf(!harness.isAvailable)('serves /metrics with the config file’s metrics settings', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('record', async () => undefined);
    const metricsOf = async (raw: Record<string, unknown>) => {
      const server = await startMailroomServer({ mr, config: validateConfig({ ...raw, sources: {} }), port: 0, dashboard: false });
      try {
        return String((await send(server.url, '/metrics', { method: 'GET' })).text);
      } finally {
        await server.stop({ timeoutMs: 2_000 });
      }
    };
    // A delivery that waits (its queue paused, so no worker sends it): an endpoint backlog.
    await mr.pauseQueue('default');
    await mr.store.endpointAdd({ tenant: 'acme', url: 'http://127.0.0.1:9/never', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', addedBy: 'operator' });
    await mr.publish('invoice.paid', {}, { tenant: 'acme' });
    const defaults = await metricsOf({});
    expect(defaults).toContain('mailroom_process_cpu');
    expect(defaults).toMatch(/^mailroom_endpoint_backlog\{endpoint="\d+"\} 1$/m);
    const without = await metricsOf({ metrics: { processMetrics: false, endpointTopN: 0 } });
    expect(without).toMatch(/^mailroom_outgoing_backlog 1$/m);
    expect(without).not.toContain('mailroom_process_cpu');
    expect(without).not.toMatch(/^mailroom_endpoint_backlog\{/m);
  });

  it.skipIf(!harness.isAvailable)('refuses a dashboard token too short to be the whole credential, and starts nothing', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('record', async () => undefined);
    const fifteen = 'x'.repeat(15);
    await expect(startMailroomServer({ mr, config, port: 0, dashboard: { token: fifteen } })).rejects.toMatchObject({
      code: 'MR_ERR_CONFIG_INVALID',
      message: expect.stringMatching(/^MAILROOM_DASHBOARD_TOKEN .*at least 16 characters/),
    });
    // From the config file: the config still loads (other commands read it), serve refuses.
    const shortInFile = validateConfig({ dashboard: { token: fifteen } });
    await expect(startMailroomServer({ mr, config: shortInFile, port: 0 })).rejects.toThrow(/^dashboard\.token: must be at least 16 characters/);
    expect(openResources().filter((resource) => resource.kind !== 'pg-pool')).toEqual([]);
    const sixteen = await startMailroomServer({ mr, config, port: 0, dashboard: { token: 'x'.repeat(16) } });
    expect((await send(sixteen.url, '/dashboard/jobs', { method: 'GET', headers: { authorization: `Bearer ${'x'.repeat(16)}` } })).status).toBe(200);
    await sixteen.stop({ timeoutMs: 2_000 });
  });

  it.skipIf(!harness.isAvailable)('throws the bind error and starts no worker when the port is taken', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('record', async () => undefined);
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      await expect(startMailroomServer({ mr, config, host: '127.0.0.1', port })).rejects.toMatchObject({ code: 'EADDRINUSE' });
      // The harness store's pool is open; no worker and no server are.
      expect(openResources().filter((resource) => resource.kind !== 'pg-pool')).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
  });
});
