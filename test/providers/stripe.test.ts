// The stripe provider against headers made by Stripe's own library (stripe 23.1.0).

import Stripe from 'stripe';
import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/validate-config.js';
import { stripeProvider } from '../../src/providers/stripe.js';
import type { RequestHeaders } from '../../src/providers/provider.js';
import { expectFailure, expectOk, jsonBody, NON_UTF8_BODY, NOW, NOW_SECONDS, tamperOneByte } from './provider-test-kit.js';

const SECRET = 'whsec_5f0e1d2c3b4a69788796a5b4c3d2e1f0';
const OLD_SECRET = 'whsec_0123456789abcdef0123456789abcdef';
const options = stripeProvider.parseOptions(undefined, 'options');
const body = jsonBody({ id: 'evt_1PqR', object: 'event', type: 'payment_intent.succeeded', data: { object: { customer: 'cus_9' } } });

function officialHeader(payload: Buffer, secret: string, timestamp = NOW_SECONDS): string {
  return Stripe.webhooks.generateTestHeaderString({ payload: payload.toString('utf8'), secret, timestamp });
}

function verify(headers: RequestHeaders, rawBody = body, secrets = [SECRET], now = NOW) {
  return stripeProvider.verify({ headers, rawBody, secrets, now, options });
}

describe('stripe provider', () => {
  it('verifies a header made by stripe.webhooks.generateTestHeaderString and reads id and type from the body', () => {
    const result = expectOk(verify({ 'stripe-signature': officialHeader(body, SECRET) }));
    expect(result.deliveryId).toBe('evt_1PqR');
    expect(result.eventType).toBe('payment_intent.succeeded');
    expect(result.timestamp).toEqual(new Date(NOW_SECONDS * 1000));
  });

  it('produces headers that stripe.webhooks.constructEvent accepts', () => {
    const now = new Date();
    const headers = stripeProvider.sign({ rawBody: body, secret: SECRET, now, options });
    const event = Stripe.webhooks.constructEvent(body, headers['stripe-signature']!, SECRET);
    expect(event.id).toBe('evt_1PqR');
    expect(() => Stripe.webhooks.constructEvent(body, headers['stripe-signature']!, OLD_SECRET)).toThrow();
  });

  it('accepts any of several v1 signatures, as Stripe sends during its own secret rolls', () => {
    const good = officialHeader(body, SECRET);
    const otherV1 = officialHeader(body, OLD_SECRET).split(',')[1]!;
    expectOk(verify({ 'stripe-signature': `${good.split(',')[0]},${otherV1},${good.split(',')[1]},v0=abc` }));
  });

  it('verifies with the second secret of a rotation', () => {
    expectOk(verify({ 'stripe-signature': officialHeader(body, OLD_SECRET) }, body, [SECRET, OLD_SECRET]));
  });

  it('keys the HMAC with the whole whsec_ string, not a decoded part', () => {
    const header = officialHeader(body, SECRET);
    expectFailure(verify({ 'stripe-signature': header }, body, [SECRET.slice('whsec_'.length)]), 'bad_signature');
  });

  it('reports a missing Stripe-Signature header', () => {
    expectFailure(verify({}), 'missing_header');
    expectFailure(verify({ 'stripe-signature': '  ' }), 'missing_header');
  });

  it('reports malformed headers: not key=value, no t, two t, no v1, non-numeric t', () => {
    const sig = officialHeader(body, SECRET);
    const v1 = sig.split(',')[1]!;
    for (const header of ['garbage', `${v1}`, `t=${NOW_SECONDS},t=${NOW_SECONDS},${v1}`, `t=${NOW_SECONDS}`, `t=soon,${v1}`, `t=-5,${v1}`]) {
      expectFailure(verify({ 'stripe-signature': header }), 'malformed_header', [SECRET, v1.slice(3)]);
    }
  });

  it('reports a signature made with another secret as bad_signature without echoing either', () => {
    const header = officialHeader(body, OLD_SECRET);
    expectFailure(verify({ 'stripe-signature': header }), 'bad_signature', [SECRET, OLD_SECRET, header.split('v1=')[1]!]);
  });

  it('treats a wrong-length or non-hex signature as bad_signature, never a throw', () => {
    for (const v1 of ['abcd', 'zz'.repeat(32), 'ab'.repeat(33), '']) {
      expectFailure(verify({ 'stripe-signature': `t=${NOW_SECONDS},v1=${v1}` }), 'bad_signature');
    }
  });

  it('rejects a body changed by one byte', () => {
    expectFailure(verify({ 'stripe-signature': officialHeader(body, SECRET) }, tamperOneByte(body)), 'bad_signature');
  });

  it('rejects a stale timestamp past 300 s and accepts one at exactly 300 s', () => {
    const header = officialHeader(body, SECRET, NOW_SECONDS - 301);
    expectFailure(verify({ 'stripe-signature': header }), 'stale_timestamp');
    expectOk(verify({ 'stripe-signature': officialHeader(body, SECRET, NOW_SECONDS - 300) }));
  });

  it('rejects a timestamp more than 300 s in the future', () => {
    expectFailure(verify({ 'stripe-signature': officialHeader(body, SECRET, NOW_SECONDS + 301) }), 'future_timestamp');
  });

  it('honours a configured tolerance', () => {
    const strict = stripeProvider.parseOptions({ toleranceMs: 10_000 }, 'options');
    const header = officialHeader(body, SECRET, NOW_SECONDS - 11);
    expectFailure(stripeProvider.verify({ headers: { 'stripe-signature': header }, rawBody: body, secrets: [SECRET], now: NOW, options: strict }), 'stale_timestamp');
  });

  it('checks the signature before the clock, so an unsigned stale request is bad_signature', () => {
    expectFailure(verify({ 'stripe-signature': `t=${NOW_SECONDS - 10_000},v1=${'0'.repeat(64)}` }), 'bad_signature');
  });

  it('verifies the raw bytes of a body that is not UTF-8', () => {
    const headers = stripeProvider.sign({ rawBody: NON_UTF8_BODY, secret: SECRET, now: NOW, options });
    const result = expectOk(verify(headers, NON_UTF8_BODY));
    expect(result.deliveryId).toBeNull();
    expectFailure(verify(headers, tamperOneByte(NON_UTF8_BODY, 2)), 'bad_signature');
  });

  it('reports missing_secret when the source has no usable secret', () => {
    expectFailure(verify({ 'stripe-signature': officialHeader(body, SECRET) }, body, []), 'missing_secret');
    expectFailure(verify({ 'stripe-signature': officialHeader(body, SECRET) }, body, ['']), 'missing_secret');
  });
});

describe('stripe secret check', () => {
  it('refuses an API key given as the signing secret, without repeating it', () => {
    const apiKey = 'sk_live_51NotARealKeyButShapedLikeOne';
    let error: unknown;
    try {
      validateConfig({ sources: { stripe: { provider: 'stripe', secrets: [SECRET, apiKey] } } });
    } catch (caught) {
      error = caught;
    }
    expect(error).toMatchObject({ code: 'MR_ERR_CONFIG_INVALID', message: expect.stringContaining('is a Stripe API key, not a webhook signing secret') });
    expect((error as Error).message).not.toContain(apiKey);
    expect(stripeProvider.checkSecret('whsec_abc')).toBeNull();
    expect(stripeProvider.checkSecret('rk_test_abc')).toContain('API key');
  });
});
