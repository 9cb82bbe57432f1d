// The shopify provider, cross-checked with @shopify/shopify-api 13.1.0's webhooks.validate
// (Shopify's library only verifies): we sign by the documented scheme, it must accept.

import '@shopify/shopify-api/adapters/node';
import { ApiVersion, LogSeverity, shopifyApi } from '@shopify/shopify-api';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import type { RequestHeaders } from '../../src/providers/provider.js';
import { shopifyProvider } from '../../src/providers/shopify.js';
import { expectFailure, expectOk, jsonBody, NON_UTF8_BODY, NOW, tamperOneByte } from './provider-test-kit.js';

const SECRET = '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';
const OLD_SECRET = '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';
const options = shopifyProvider.parseOptions(undefined, 'options');
const body = jsonBody({ id: 820982911946154500, email: 'jon@example.com', total_price: '10.00' });

async function shopifyAccepts(payload: Buffer, headers: Record<string, string>, secret: string): Promise<boolean> {
  const shopify = shopifyApi({
    apiKey: 'mailroom-test',
    apiSecretKey: secret,
    hostName: 'localhost',
    apiVersion: ApiVersion.January25,
    isEmbeddedApp: false,
    logger: { level: LogSeverity.Error, log: async () => {} },
  });
  // The node adapter only reads method, url and headers from the request.
  const rawRequest = { method: 'POST', url: '/hooks/shop', headers } as unknown as IncomingMessage;
  const result = await shopify.webhooks.validate({ rawBody: payload.toString('utf8'), rawRequest, rawResponse: {} as ServerResponse });
  return result.valid;
}

function verify(headers: RequestHeaders, rawBody = body, secrets = [SECRET]) {
  return shopifyProvider.verify({ headers, rawBody, secrets, now: NOW, options });
}

describe('shopify provider', () => {
  it('produces headers that @shopify/shopify-api webhooks.validate accepts, and it refuses another secret', async () => {
    const headers = shopifyProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options, deliveryId: 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043' });
    expect(await shopifyAccepts(body, headers, SECRET)).toBe(true);
    expect(await shopifyAccepts(body, headers, OLD_SECRET)).toBe(false);
    expect(await shopifyAccepts(tamperOneByte(body), headers, SECRET)).toBe(false);
  });

  it('verifies its own signature and reads the webhook id and topic', () => {
    const headers = shopifyProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options, deliveryId: 'wh-1', eventType: 'orders/paid' });
    const result = expectOk(verify(headers));
    expect(result.deliveryId).toBe('wh-1');
    expect(result.eventType).toBe('orders/paid');
  });

  it('falls back to X-Shopify-Event-Id when no webhook id is sent', () => {
    const { 'x-shopify-webhook-id': _dropped, ...headers } = shopifyProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options });
    expect(expectOk(verify({ ...headers, 'x-shopify-event-id': 'ev-9' })).deliveryId).toBe('ev-9');
    expect(expectOk(verify(headers)).deliveryId).toBeNull();
  });

  it('accepts the unprefixed header names of Shopify Events deliveries', () => {
    const signed = shopifyProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options });
    const headers = {
      'shopify-hmac-sha256': signed['x-shopify-hmac-sha256']!,
      'shopify-webhook-id': 'evt-delivery-1',
      'shopify-topic': 'orders/create',
    };
    const result = expectOk(verify(headers));
    expect(result.deliveryId).toBe('evt-delivery-1');
    expect(result.eventType).toBe('orders/create');
  });

  it('verifies with the second secret of a rotation', () => {
    const headers = shopifyProvider.sign({ rawBody: body, secret: OLD_SECRET, now: NOW, options });
    expectOk(verify(headers, body, [SECRET, OLD_SECRET]));
  });

  it('reports a missing header, another secret, a wrong length and bad base64', () => {
    const headers = shopifyProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options });
    const { 'x-shopify-hmac-sha256': signature, ...unsigned } = headers;
    expectFailure(verify(unsigned), 'missing_header');
    expectFailure(verify(headers, body, [OLD_SECRET]), 'bad_signature', [SECRET, OLD_SECRET, signature!]);
    expectFailure(verify({ ...headers, 'x-shopify-hmac-sha256': 'AAAA' }), 'bad_signature');
    expectFailure(verify({ ...headers, 'x-shopify-hmac-sha256': `${signature}AAAA` }), 'bad_signature');
    expectFailure(verify({ ...headers, 'x-shopify-hmac-sha256': 'not base64 at all' }), 'bad_signature');
    expectFailure(verify(headers, body, []), 'missing_secret');
  });

  it('rejects a body changed by one byte', () => {
    const headers = shopifyProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options });
    expectFailure(verify(headers, tamperOneByte(body)), 'bad_signature');
  });

  it('verifies the raw bytes of a body that is not UTF-8', () => {
    const headers = shopifyProvider.sign({ rawBody: NON_UTF8_BODY, secret: SECRET, now: NOW, options });
    expectOk(verify(headers, NON_UTF8_BODY));
    expectFailure(verify(headers, tamperOneByte(NON_UTF8_BODY, 5)), 'bad_signature');
  });
});
