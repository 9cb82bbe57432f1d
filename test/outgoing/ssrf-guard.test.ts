// The SSRF guard of outgoing deliveries: every refused range in every disguise, at add and
// at every send, with the connection pinned to the checked address. Host names resolve
// through an injected resolver, and no test ever opens a connection to a non-loopback
// address: node's `net.client.socket` channel reports every socket created, and the
// blocked cases assert it reported none.

import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { SsrfGuard } from '../../src/tasks/deliver/ssrf-guard.js';
import type { Resolve } from '../../src/tasks/deliver/ssrf-guard.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';
import { closeOutgoingMailrooms, openOutgoingMailroom, startVerifyingReceiver } from './outgoing-kit.js';
import type { VerifyingReceiver } from './outgoing-kit.js';

/**
 * Addresses any socket tried to reach while `fn` ran: what its lookup handed it, and what
 * it connected to. A socket whose lookup was refused never gets that far. (The PostgreSQL
 * store's own connections, to loopback, show up too.)
 */
async function connectionsDuring(fn: () => Promise<unknown>): Promise<string[]> {
  const addresses: string[] = [];
  const onSocket = (message: unknown) => {
    const socket = (message as { socket: Socket }).socket;
    socket.on('lookup', (error: Error | null, address: string) => void (error ? undefined : addresses.push(address)));
    socket.on('connect', () => void addresses.push(socket.remoteAddress ?? '?'));
  };
  subscribe('net.client.socket', onSocket);
  try {
    await fn();
  } finally {
    unsubscribe('net.client.socket', onSocket);
  }
  return addresses;
}

/** A resolver that answers from a table, and whose answers a test can change (rebinding). */
function tableResolver(table: Record<string, string[]>): Resolve & { table: Record<string, string[]> } {
  const resolve = (async (hostname: string) => {
    const addresses = resolve.table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  }) as unknown as Resolve & { table: Record<string, string[]> };
  resolve.table = table;
  return resolve;
}

const REFUSED_URLS: Array<[string, string]> = [
  ['http://127.0.0.1/', 'loopback'],
  ['http://2130706433/', 'loopback (decimal)'],
  ['http://0x7f.1/', 'loopback (hex)'],
  ['http://0177.0.0.1/', 'loopback (octal)'],
  ['http://[::1]/', 'IPv6 loopback'],
  ['http://[::ffff:127.0.0.1]/', 'IPv4-mapped IPv6 loopback'],
  ['http://[::ffff:a00:1]/', 'IPv4-mapped IPv6 private'],
  ['http://[64:ff9b::a00:1]/', 'NAT64 of a private address'],
  ['http://10.0.0.1/', 'private'],
  ['http://172.16.5.4/', 'private'],
  ['http://192.168.1.1/', 'private'],
  ['http://169.254.169.254/latest/meta-data/', 'metadata (link-local)'],
  ['http://[fd00:ec2::254]/', 'metadata (unique-local)'],
  ['http://100.100.100.200/', 'metadata (CGNAT)'],
  ['http://100.64.0.1/', 'CGNAT'],
  ['http://[fe80::1]/', 'IPv6 link-local'],
  ['http://[fc00::1]/', 'unique-local'],
  ['http://224.0.0.1/', 'multicast'],
  ['http://[ff02::1]/', 'IPv6 multicast'],
  ['http://0.0.0.0/', 'unspecified'],
  ['http://localhost./', 'a name with a trailing dot that resolves to loopback'],
  ['http://internal.example.com/', 'a name that resolves to a private address'],
  ['http://mixed.example.com/', 'a name with one public and one private address'],
];

const RESOLVER_TABLE = {
  localhost: ['127.0.0.1'],
  'internal.example.com': ['10.1.2.3'],
  'mixed.example.com': ['93.184.216.34', '192.168.0.10'],
  'public.example.com': ['93.184.216.34'],
};

describe('SSRF guard', () => {
  it.each(REFUSED_URLS)('refuses %s (%s) at add, without connecting', async (url) => {
    const guard = new SsrfGuard({ resolve: tableResolver({ ...RESOLVER_TABLE }) });
    let error: any;
    expect(await connectionsDuring(async () => (error = await guard.checkUrl(new URL(url)).catch((e: unknown) => e)))).toEqual([]);
    expect(error).toMatchObject({ code: 'MR_ERR_URL_BLOCKED' });
  });

  it('lets a public address through, and what the allowlist names (hosts, addresses, CIDR ranges)', async () => {
    const resolve = tableResolver({ ...RESOLVER_TABLE });
    expect(await new SsrfGuard({ resolve }).checkUrl(new URL('https://public.example.com/hooks'))).toBeUndefined();
    const allowing = new SsrfGuard({ resolve, allowlist: ['internal.example.com', '127.0.0.1', '192.168.0.0/16', '::1/128'] });
    for (const url of ['http://internal.example.com/', 'http://127.0.0.1:8080/', 'http://mixed.example.com/', 'http://[::1]/']) {
      expect(await allowing.checkUrl(new URL(url))).toBeUndefined();
    }
    await expect(allowing.checkUrl(new URL('http://10.0.0.1/'))).rejects.toMatchObject({ code: 'MR_ERR_URL_BLOCKED' });
    await expect(allowing.checkUrl(new URL('http://127.0.0.2/'))).rejects.toMatchObject({ code: 'MR_ERR_URL_BLOCKED' });
  });

  it('hands the HTTP client only the checked addresses from its lookup, and refuses a host with any refused one', async () => {
    const guard = new SsrfGuard({ resolve: tableResolver({ ...RESOLVER_TABLE }) });
    const lookup = (host: string, all: boolean) =>
      new Promise<unknown>((resolve) => guard.lookup(host, { all }, (error, address, family) => resolve(error ?? (all ? address : [address, family]))));
    expect(await lookup('public.example.com', true)).toEqual([{ address: '93.184.216.34', family: 4 }]);
    expect(await lookup('public.example.com', false)).toEqual(['93.184.216.34', 4]);
    expect(await lookup('mixed.example.com', true)).toMatchObject({ code: 'MR_ERR_URL_BLOCKED', range: 'private' });
  });
});

describe.each(storeHarnesses)('SSRF guard at every send ($name)', (harness) => {
  const receivers: VerifyingReceiver[] = [];
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.close();
    await closeOutgoingMailrooms(harness);
  });

  /** A verifying receiver on loopback, closed after the test, and its port. */
  async function loopbackReceiver(): Promise<{ target: VerifyingReceiver; port: string }> {
    const target = await startVerifyingReceiver();
    receivers.push(target);
    return { target, port: new URL(target.url).port };
  }

  it.skipIf(!harness.isAvailable)('refuses a host that resolved to a public address at add and to a private one at send (DNS rebinding), without connecting', async () => {
    const resolve = tableResolver({ 'hooks.customer.example': ['93.184.216.34'] });
    const mr = await openOutgoingMailroom(harness, { endpoints: { allowlist: [], resolve } });
    const endpoint = await mr.endpoints.add({ tenant: 'acme', url: 'http://hooks.customer.example/in' });
    resolve.table['hooks.customer.example'] = ['169.254.169.254'];
    const reached = await connectionsDuring(async () => {
      const worker = mr.work();
      const { message } = await mr.publish('invoice.paid', {}, { tenant: 'acme' });
      const delivery = await waitFor(async () => {
        const [found] = await mr.deliveries.list({ messageId: message.id });
        return found?.status === 'failed' && found;
      });
      await waitFor(async () => (await mr.getJob(delivery.jobId!))!.status === 'dead');
      await worker.stop({ timeoutMs: 2_000 });
    });
    expect(reached.filter((address) => address !== '127.0.0.1' && address !== '::1' && address !== '::ffff:127.0.0.1')).toEqual([]);
    const [delivery] = await mr.deliveries.list({ endpointId: endpoint.id });
    const job = (await mr.getJob(delivery!.jobId!))!;
    expect(job).toMatchObject({ status: 'dead', deadReason: 'permanent' });
    // The error is the tenant's wording, which the portal shows for every endpoint of the
    // tenant, an operator's too (the customer controls its DNS); the operator's, with the
    // address it resolved to, is in the attempt's details.
    expect(job.lastError).toContain('Endpoint host hooks.customer.example is not a public address');
    expect(job.lastError).not.toContain('169.254.169.254');
    expect(delivery!.lastError).not.toContain('169.254.169.254');
    expect(job.attemptsLog.at(-1)!.details).toMatchObject({ error: 'url_blocked', refusal: expect.stringContaining('169.254.169.254') });
  });

  it.skipIf(!harness.isAvailable)('connects to the address it checked: the loopback receiver the allowlist names gets the delivery', async () => {
    const { target, port } = await loopbackReceiver();
    const resolve = tableResolver({ 'receiver.test': ['127.0.0.1'] });
    const mr = await openOutgoingMailroom(harness, { endpoints: { allowlist: ['127.0.0.1/32'], resolve } });
    const endpoint = await mr.endpoints.add({ tenant: 'acme', url: `http://receiver.test:${port}/hooks` });
    target.secrets.push(endpoint.secret);
    mr.work();
    const { message } = await mr.publish('invoice.paid', {}, { tenant: 'acme' });
    await waitFor(async () => (await mr.deliveries.list({ messageId: message.id }))[0]?.status === 'delivered');
    expect(target.received[0]!.verifiedWith).toBe(endpoint.secret);
    expect(target.received[0]!.headers.host).toBe(`receiver.test:${port}`);
  });

  it.skipIf(!harness.isAvailable)('holds a tenant’s endpoint to tenantAllowlist, not the operator’s allowlist, at add and at every send', async () => {
    const { target, port } = await loopbackReceiver();
    const resolve = tableResolver({ 'tenant.customer.example': ['93.184.216.34'], 'receiver.test': ['127.0.0.1'] });
    const mr = await openOutgoingMailroom(harness, { endpoints: { allowlist: ['127.0.0.1/32'], resolve } });
    // The operator may reach loopback; a tenant may not, by name or by address.
    await expect(mr.endpoints.addByTenant({ tenant: 'acme', url: `http://receiver.test:${port}/hooks` })).rejects.toMatchObject({ code: 'MR_ERR_URL_BLOCKED' });
    await expect(mr.endpoints.addByTenant({ tenant: 'acme', url: target.url })).rejects.toMatchObject({ code: 'MR_ERR_URL_BLOCKED' });
    const operators = await mr.endpoints.add({ tenant: 'acme', url: `http://receiver.test:${port}/operator` });
    expect(operators.addedBy).toBe('operator');
    // A tenant's host that resolved to a public address at add, and to loopback at send.
    const tenants = await mr.endpoints.addByTenant({ tenant: 'acme', url: `http://tenant.customer.example:${port}/tenant` });
    expect(tenants.addedBy).toBe('tenant');
    expect((await mr.endpoints.get(tenants.id))!.addedBy).toBe('tenant');
    target.secrets.push(operators.secret, tenants.secret);
    resolve.table['tenant.customer.example'] = ['127.0.0.1'];
    // Moving it onto the operator's trusted host is refused too.
    await expect(mr.endpoints.update(tenants.id, { url: `http://receiver.test:${port}/tenant` })).rejects.toMatchObject({ code: 'MR_ERR_URL_BLOCKED' });
    const worker = mr.work();
    const { message } = await mr.publish('invoice.paid', {}, { tenant: 'acme' });
    const outcomes = await waitFor(async () => {
      const deliveries = await mr.deliveries.list({ messageId: message.id });
      return deliveries.length === 2 && deliveries.every((d) => d.status !== 'pending') && deliveries;
    });
    await worker.stop({ timeoutMs: 2_000 });
    expect(Object.fromEntries(outcomes.map((d) => [d.endpointId, d.status]))).toEqual({ [operators.id]: 'delivered', [tenants.id]: 'failed' });
    expect(target.received.map((r) => r.verifiedWith)).toEqual([operators.secret]);
    const refusedJobId = outcomes.find((d) => d.endpointId === tenants.id)!.jobId!;
    const refused = await waitFor(async () => { const job = (await mr.getJob(refusedJobId))!; return job.status === 'dead' && job; });
    expect(refused).toMatchObject({ status: 'dead', deadReason: 'permanent' });
    // The error the tenant sees (the portal shows it) names neither the address nor a config key;
    // the operator's wording is in the attempt's details.
    expect(refused.lastError).toContain('Endpoint host tenant.customer.example is not a public address; deliveries go to public addresses only.');
    expect(refused.lastError).not.toContain('127.0.0.1');
    const refusal = (refused.attemptsLog.at(-1)!.details as { refusal?: string }).refusal;
    expect(refusal).toContain('resolves to 127.0.0.1');
    expect(refusal).toContain('endpoints.tenantAllowlist');
    const [tenantDelivery] = await mr.deliveries.list({ endpointId: tenants.id });
    expect(String(tenantDelivery!.lastError)).not.toContain('127.0.0.1');
  });

  it.skipIf(!harness.isAvailable)('never reuses a connection the operator’s allowlist let through for a tenant’s endpoint at the same host and port', async () => {
    const { target, port } = await loopbackReceiver();
    const resolve = tableResolver({ 'shared.test': ['93.184.216.34'] });
    const mr = await openOutgoingMailroom(harness, { endpoints: { allowlist: ['shared.test'], resolve } });
    const tenants = await mr.endpoints.addByTenant({ tenant: 'acme', url: `http://shared.test:${port}/tenant`, eventTypes: ['second'] });
    const operators = await mr.endpoints.add({ tenant: 'acme', url: `http://shared.test:${port}/operator`, eventTypes: ['first'] });
    target.secrets.push(operators.secret, tenants.secret);
    resolve.table['shared.test'] = ['127.0.0.1'];
    const worker = mr.work();
    // The operator's delivery leaves a keep-alive connection to 127.0.0.1 behind.
    const first = await mr.publish('first', {}, { tenant: 'acme' });
    await waitFor(async () => (await mr.deliveries.list({ messageId: first.message.id }))[0]?.status === 'delivered');
    const second = await mr.publish('second', {}, { tenant: 'acme' });
    const tenantDelivery = await waitFor(async () => {
      const [delivery] = await mr.deliveries.list({ messageId: second.message.id });
      return delivery?.status !== 'pending' && delivery;
    });
    await worker.stop({ timeoutMs: 2_000 });
    expect(tenantDelivery.status).toBe('failed');
    expect(target.received.map((r) => r.verifiedWith)).toEqual([operators.secret]);
  });

  it.skipIf(!harness.isAvailable)('lets a tenant’s endpoint reach what tenantAllowlist names', async () => {
    const { target } = await loopbackReceiver();
    const mr = await openOutgoingMailroom(harness, { endpoints: { allowlist: [], tenantAllowlist: ['127.0.0.1'] } });
    await expect(mr.endpoints.add({ tenant: 'acme', url: target.url })).rejects.toMatchObject({ code: 'MR_ERR_URL_BLOCKED' });
    const endpoint = await mr.endpoints.addByTenant({ tenant: 'acme', url: target.url });
    target.secrets.push(endpoint.secret);
    mr.work();
    const { message } = await mr.publish('invoice.paid', {}, { tenant: 'acme' });
    await waitFor(async () => (await mr.deliveries.list({ messageId: message.id }))[0]?.status === 'delivered');
    expect(target.received[0]!.verifiedWith).toBe(endpoint.secret);
  });
});
