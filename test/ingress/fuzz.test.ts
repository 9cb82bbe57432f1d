// Random bodies, headers and paths thrown at the real route: the server never answers 500
// and stores nothing from input that is not correctly signed. Run on SQLite only: what is
// under test is the HTTP layer's refusals, which never reach the store.

import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sqliteHarness } from '../harness/sqlite.js';
import type { HarnessStore } from '../harness/store-harness.js';
import { closeAll, countRows, openIngressMailroom, send, startIngress } from './ingress-kit.js';

const SIGNATURE_HEADERS = [
  'stripe-signature', 'x-hub-signature-256', 'x-github-delivery', 'x-github-event', 'webhook-id', 'webhook-timestamp',
  'webhook-signature', 'svix-id', 'svix-timestamp', 'svix-signature', 'x-shopify-hmac-sha256', 'x-shopify-webhook-id',
  'x-slack-signature', 'x-slack-request-timestamp', 'x-signature', 'content-type',
];
const SOURCES = ['stripe', 'github', 'standard', 'polar', 'shopify', 'slack', 'hmac', 'missing', '%zz', '..', ''];

describe('fuzzing the webhook route', () => {
  let url: string;
  let harnessStore: HarnessStore;

  beforeAll(async () => {
    const opened = await openIngressMailroom(sqliteHarness);
    harnessStore = opened.harnessStore;
    ({ url } = await startIngress(opened.mr, {
      server: { bodyLimitBytes: 4_096 },
      sources: {
        stripe: { provider: 'stripe', secrets: ['whsec_abc'], tasks: ['t'] },
        github: { provider: 'github', secrets: ['gh'], tasks: ['t'] },
        standard: { provider: 'standard', secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], tasks: ['t'] },
        polar: { provider: 'polar', secrets: ['polar_whs_x'], tasks: ['t'] },
        shopify: { provider: 'shopify', secrets: ['shp'], tasks: ['t'] },
        slack: { provider: 'slack', secrets: ['sl'], tasks: ['t'] },
        hmac: { provider: 'hmac', secrets: ['h'], options: { header: 'x-signature', idPath: '$.id' }, tasks: [{ task: 't', group: '$.a.b' }] },
      },
    }));
  });

  afterAll(async () => {
    await closeAll(sqliteHarness);
  });

  it('never answers 500 and stores nothing from random unsigned input', async () => {
    const headerValue = fc.oneof(
      fc.string({ maxLength: 80 }).map((s) => s.replace(/[^\x20-\x7e]/g, '')),
      fc.constantFrom('t=1,v1=00', 'v1,AAAA', 'sha256=', 'v0=', '0', '-1', '99999999999999', 'application/json', 'application/x-www-form-urlencoded'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...SOURCES),
        fc.constantFrom('POST', 'POST', 'POST', 'GET', 'PUT', 'DELETE'),
        fc.dictionary(fc.constantFrom(...SIGNATURE_HEADERS), headerValue, { maxKeys: 6 }),
        fc.oneof(fc.uint8Array({ maxLength: 5_000 }).map((a) => Buffer.from(a)), fc.json().map((j) => Buffer.from(j))),
        async (source, method, headers, body) => {
          const response = await send(url, `/hooks/${source}`, { method, headers, body: method === 'GET' ? undefined : body });
          expect(response.status).not.toBe(500);
          expect(response.status).toBeLessThan(500);
          expect(response.status).not.toBe(202);
          expect(response.json?.error?.code ?? '').toMatch(/^MR_ERR_/);
        },
      ),
      { numRuns: 300 },
    );
    expect(await countRows(harnessStore)).toEqual({ events: 0, jobs: 0 });
  });
});
