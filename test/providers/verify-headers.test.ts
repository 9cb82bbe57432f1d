// verifyHeaders judges a request before its body arrives, so the ingress can refuse it
// without holding the body. Its one promise: never refuse what verify would accept. For a
// correctly signed request, only the timestamp window can fail, and both must agree on it.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { configureProvider, PROVIDER_NAMES, type ProviderName } from '../../src/providers/index.js';
import { jsonBody, NOW } from './provider-test-kit.js';

const SECRETS: Record<Exclude<ProviderName, 'none'>, string> = {
  stripe: 'whsec_verify_headers_secret',
  github: 'gh-verify-headers-secret',
  standard: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  polar: 'polar_whs_verify_headers',
  shopify: 'shpss_verify_headers',
  slack: 'slack-verify-headers-secret',
  hmac: 'hmac-verify-headers-secret',
};
const TOLERANCE_MS = 300_000;

function configured(name: ProviderName) {
  const isTimestamped = ['stripe', 'standard', 'polar', 'slack'].includes(name);
  const options = name === 'hmac' ? { header: 'x-signature', prefix: 'sha256=', idHeader: 'x-id' } : isTimestamped ? { toleranceMs: TOLERANCE_MS } : undefined;
  return configureProvider({ provider: name, options, secrets: name === 'none' ? undefined : [SECRETS[name]] }, `sources.${name}`);
}

const HEADER_NAMES = [
  'stripe-signature', 'x-hub-signature-256', 'webhook-id', 'webhook-timestamp', 'webhook-signature', 'svix-id',
  'svix-timestamp', 'svix-signature', 'x-shopify-hmac-sha256', 'shopify-hmac-sha256', 'x-slack-signature',
  'x-slack-request-timestamp', 'x-signature',
];
const headerValue = fc.oneof(
  fc.string(),
  fc.stringMatching(/^(t=\d{0,12},)?(v1=[0-9a-f]{0,70},?)*$/),
  fc.stringMatching(/^(sha256=|v0=)?[0-9a-fA-F]{0,70}$/),
  fc.stringMatching(/^(v1,[A-Za-z0-9+/=]{0,50} ?)*$/),
  fc.integer({ min: -1_000, max: 1_000 }).map((offset) => String(Math.floor(NOW.getTime() / 1000) + offset)),
);

describe('verifyHeaders', () => {
  for (const name of PROVIDER_NAMES) {
    it(`${name} agrees with verify on a correctly signed request judged at any time`, () => {
      const source = configured(name);
      const rawBody = jsonBody({ id: 'evt_headers', type: 'sample.created', event_id: 'Ev_headers' });
      fc.assert(
        fc.property(fc.integer({ min: -2 * TOLERANCE_MS, max: 2 * TOLERANCE_MS }), (offsetMs) => {
          const headers = source.sign({ rawBody, now: NOW, deliveryId: 'd-1', eventType: 'sample.created' });
          const judgedAt = new Date(NOW.getTime() + offsetMs);
          const verified = source.verify({ headers, rawBody, now: judgedAt });
          const early = source.verifyHeaders({ headers, now: judgedAt });
          expect(early).toEqual(verified.ok ? null : verified);
        }),
        { numRuns: 200 },
      );
    });

    it(`${name} never refuses from headers what verify accepts, and never throws`, () => {
      const source = configured(name);
      fc.assert(
        fc.property(
          fc.dictionary(fc.constantFrom(...HEADER_NAMES), fc.oneof(headerValue, fc.array(headerValue, { maxLength: 2 }))),
          fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
          (headers, rawBody) => {
            const early = source.verifyHeaders({ headers, now: NOW });
            if (early === null) return;
            expect(['missing_header', 'malformed_header', 'stale_timestamp', 'future_timestamp']).toContain(early.reason);
            expect(source.verify({ headers, rawBody, now: NOW }).ok).toBe(false);
          },
        ),
        { numRuns: 300 },
      );
    });
  }

  it('refuses a missing signature, a malformed one and a stale timestamp without a body', () => {
    const stale = String(Math.floor(NOW.getTime() / 1000) - 600);
    expect(configured('standard').verifyHeaders({ headers: { 'webhook-id': 'm', 'webhook-timestamp': stale }, now: NOW })?.reason).toBe('missing_header');
    expect(configured('github').verifyHeaders({ headers: { 'x-hub-signature-256': 'md5=00' }, now: NOW })?.reason).toBe('malformed_header');
    expect(configured('stripe').verifyHeaders({ headers: { 'stripe-signature': `t=${stale},v1=00` }, now: NOW })?.reason).toBe('stale_timestamp');
    expect(configured('slack').verifyHeaders({ headers: { 'x-slack-signature': 'v0=00', 'x-slack-request-timestamp': 'soon' }, now: NOW })?.reason).toBe('malformed_header');
    expect(configured('shopify').verifyHeaders({ headers: {}, now: NOW })?.reason).toBe('missing_header');
  });
});
