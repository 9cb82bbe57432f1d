// Property: for any body bytes and time, what a provider signs verifies at that time, and
// the same headers fail as bad_signature once any single byte of the body changes.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { getProvider, PROVIDER_NAMES } from '../../src/providers/index.js';
import { expectFailure, expectOk, tamperOneByte } from './provider-test-kit.js';

const SECRET_BY_PROVIDER: Record<string, string> = { standard: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' };
const signing = PROVIDER_NAMES.filter((name) => name !== 'none');

describe('sign then verify on arbitrary bodies', () => {
  for (const name of signing) {
    it(`${name} verifies what it signs and rejects any one-byte change`, () => {
      const provider = getProvider(name);
      const options = provider.parseOptions(name === 'hmac' ? { header: 'x-signature', encoding: 'base64' } : undefined, 'options');
      const secret = SECRET_BY_PROVIDER[name] ?? 'property-secret';
      fc.assert(
        fc.property(
          fc.uint8Array({ minLength: 1, maxLength: 200 }),
          fc.nat(),
          fc.date({ min: new Date('2001-01-01T00:00:00Z'), max: new Date('2100-01-01T00:00:00Z'), noInvalidDate: true }),
          (bytes, position, now) => {
            const rawBody = Buffer.from(bytes);
            const headers = provider.sign({ rawBody, secret, now, options });
            expectOk(provider.verify({ headers, rawBody, secrets: ['other-secret', secret], now, options }));
            const tampered = tamperOneByte(rawBody, position % rawBody.length);
            expectFailure(provider.verify({ headers, rawBody: tampered, secrets: [secret], now, options }), 'bad_signature');
          },
        ),
        { numRuns: 100 },
      );
      expect(provider.requiresSecret).toBe(true);
    });
  }
});
