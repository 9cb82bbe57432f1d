// Property: whatever bytes and headers arrive, verify and identify return a value of the
// union and never throw, because an exception here would turn a bad request into a 500.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getProvider, PROVIDER_NAMES, VERIFY_FAILURE_REASONS, type ProviderName } from '../../src/providers/index.js';
import { NOW } from './provider-test-kit.js';

const HEADER_NAMES = [
  'stripe-signature', 'x-hub-signature-256', 'x-github-delivery', 'x-github-event',
  'webhook-id', 'webhook-timestamp', 'webhook-signature', 'svix-id', 'svix-timestamp', 'svix-signature',
  'x-shopify-hmac-sha256', 'x-shopify-webhook-id', 'shopify-hmac-sha256', 'x-slack-signature',
  'x-slack-request-timestamp', 'content-type', 'x-signature', 'x-id',
];

// Values that look almost right are the interesting ones: prefixes, separators, digits.
const headerValue = fc.oneof(
  fc.string(),
  fc.stringMatching(/^(t=\d{0,12},)?(v1=[0-9a-f]{0,70},?)*$/),
  fc.stringMatching(/^(sha256=|v0=)?[0-9a-fA-Fg]{0,70}$/),
  fc.stringMatching(/^(v1,[A-Za-z0-9+/=]{0,50} ?)*$/),
  fc.stringMatching(/^\d{0,16}$/),
  fc.constant('application/x-www-form-urlencoded'),
);
const headers = fc.dictionary(fc.constantFrom(...HEADER_NAMES), fc.oneof(headerValue, fc.array(headerValue, { maxLength: 3 })));
const body = fc.oneof(
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.json().map((text) => Buffer.from(text)),
  fc.string().map((text) => Buffer.from(`payload=${encodeURIComponent(text)}`)),
);
const secrets = fc.array(fc.oneof(fc.string(), fc.constant('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw')), { maxLength: 3 });
const now = fc.date({ min: new Date(0), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true });

function optionsFor(name: ProviderName): unknown {
  const raw = name === 'hmac' ? { header: 'x-signature', prefix: 'sha256=', idHeader: 'x-id', typePath: '$.type' } : undefined;
  return getProvider(name).parseOptions(raw, 'options');
}

describe('verify on arbitrary input', () => {
  for (const name of PROVIDER_NAMES) {
    it(`${name} returns a union value and never throws`, () => {
      const provider = getProvider(name);
      const options = optionsFor(name);
      fc.assert(
        fc.property(headers, body, secrets, now, (h, rawBody, s, at) => {
          const result = provider.verify({ headers: h, rawBody, secrets: s, now: at, options });
          if (result.ok) {
            expect(result.deliveryId === null || typeof result.deliveryId === 'string').toBe(true);
            expect(result.eventType === null || typeof result.eventType === 'string').toBe(true);
          } else {
            expect(VERIFY_FAILURE_REASONS).toContain(result.reason);
            expect(typeof result.message).toBe('string');
          }
          const identity = provider.identify({ headers: h, rawBody, options });
          expect(identity.deliveryId === null || typeof identity.deliveryId === 'string').toBe(true);
          provider.challengeResponse(rawBody);
        }),
        { numRuns: 300 },
      );
    });
  }
});
