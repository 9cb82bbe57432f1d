// The polar provider, cross-checked with @polar-sh/sdk 0.49.0's validateEvent (Polar's SDK
// only verifies). Its key rule: validateEvent base64-encodes the secret's UTF-8 bytes and
// hands that to standardwebhooks, which decodes it again, so the key is the UTF-8 bytes.

import { SDKValidationError } from '@polar-sh/sdk/models/errors/sdkvalidationerror.js';
import { validateEvent, WebhookVerificationError } from '@polar-sh/sdk/webhooks';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { polarProvider } from '../../src/providers/polar.js';
import type { RequestHeaders } from '../../src/providers/provider.js';
import { expectFailure, expectOk, jsonBody, NON_UTF8_BODY, NOW, NOW_SECONDS, tamperOneByte } from './provider-test-kit.js';

// Polar shows secrets like this; the prefix is part of the key.
const SECRET = 'polar_whs_7Hk2pQv9sXc4mN1rT8yL0aB3dF6gJ5eW';
const OLD_SECRET = 'polar_whs_previousSecretBeforeRotation00';
const options = polarProvider.parseOptions(undefined, 'options');
const body = jsonBody({ type: 'organization.updated', timestamp: '2025-06-01T12:00:00Z', data: { id: 'org_1' } });

/** True when validateEvent accepted the signature (a later schema complaint is not a signature verdict). */
function polarAccepts(payload: Buffer, headers: Record<string, string>, secret: string): boolean {
  try {
    validateEvent(payload.toString('utf8'), headers, secret);
    return true;
  } catch (error) {
    if (error instanceof WebhookVerificationError) return false;
    // Thrown after the signature check passed: the body is not a complete Polar event.
    if (error instanceof SDKValidationError) return true;
    throw error;
  }
}

function verify(headers: RequestHeaders, rawBody = body, secrets = [SECRET], now = NOW) {
  return polarProvider.verify({ headers, rawBody, secrets, now, options });
}

describe('polar provider', () => {
  it('produces headers that @polar-sh/sdk validateEvent accepts, and it refuses another secret', () => {
    const headers = polarProvider.sign({ rawBody: body, secret: SECRET, now: new Date(), options, deliveryId: 'msg_polar_1' });
    expect(polarAccepts(body, headers, SECRET)).toBe(true);
    expect(polarAccepts(body, headers, OLD_SECRET)).toBe(false);
    expect(polarAccepts(tamperOneByte(body), headers, SECRET)).toBe(false);
  });

  it('verifies what a Polar-keyed standardwebhooks signer produces, and reads id and type', () => {
    // What Polar's SDK does internally: base64 of the UTF-8 secret, as a Standard Webhooks key.
    const signer = new StandardWebhook(Buffer.from(SECRET, 'utf8').toString('base64'));
    const headers = {
      'webhook-id': 'msg_polar_2',
      'webhook-timestamp': String(NOW_SECONDS),
      'webhook-signature': signer.sign('msg_polar_2', NOW, body.toString('utf8')),
    };
    const result = expectOk(verify(headers));
    expect(result.deliveryId).toBe('msg_polar_2');
    expect(result.eventType).toBe('organization.updated');
  });

  it('does not treat the secret as whsec_ base64, unlike the standard provider', () => {
    const base64Looking = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const headers = polarProvider.sign({ rawBody: body, secret: base64Looking, now: NOW, options });
    expectOk(verify(headers, body, [base64Looking]));
    const decodedKeySigner = new StandardWebhook(base64Looking);
    const decodedKeyHeaders = { ...headers, 'webhook-signature': decodedKeySigner.sign(headers['webhook-id']!, NOW, body.toString('utf8')) };
    expectFailure(verify(decodedKeyHeaders, body, [base64Looking]), 'bad_signature');
  });

  it('verifies with the second secret of a rotation', () => {
    const headers = polarProvider.sign({ rawBody: body, secret: OLD_SECRET, now: NOW, options });
    expectOk(verify(headers, body, [SECRET, OLD_SECRET]));
  });

  it('reports missing, malformed and bad signatures, stale and future timestamps', () => {
    const headers = polarProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options });
    const { 'webhook-signature': signature, ...unsigned } = headers;
    expectFailure(verify(unsigned), 'missing_header');
    expectFailure(verify({ ...headers, 'webhook-signature': signature!.slice(3) }), 'malformed_header', [signature!.slice(3)]);
    expectFailure(verify({ ...headers, 'webhook-signature': 'v1,AAAA' }), 'bad_signature');
    expectFailure(verify(headers, body, [OLD_SECRET]), 'bad_signature', [SECRET, OLD_SECRET, signature!.slice(3)]);
    expectFailure(verify(headers, tamperOneByte(body)), 'bad_signature');
    expectFailure(verify(headers, body, [SECRET], new Date(NOW.getTime() + 301_000)), 'stale_timestamp');
    expectFailure(verify(headers, body, [SECRET], new Date(NOW.getTime() - 301_000)), 'future_timestamp');
    expectFailure(verify(headers, body, []), 'missing_secret');
  });

  it('verifies the raw bytes of a body that is not UTF-8', () => {
    const headers = polarProvider.sign({ rawBody: NON_UTF8_BODY, secret: SECRET, now: NOW, options });
    expectOk(verify(headers, NON_UTF8_BODY));
    expectFailure(verify(headers, tamperOneByte(NON_UTF8_BODY, 4)), 'bad_signature');
  });
});
