// The standard provider against signatures made by standardwebhooks 1.1.1 (the reference
// library) and svix 1.99.1 (which sends the same scheme under `svix-*` header names).

import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { describe, expect, it } from 'vitest';
import type { RequestHeaders } from '../../src/providers/provider.js';
import { standardProvider, standardWebhooksKey } from '../../src/providers/standard.js';
import { expectFailure, expectOk, jsonBody, NON_UTF8_BODY, NOW, NOW_SECONDS, tamperOneByte } from './provider-test-kit.js';

// The secret from the Standard Webhooks specification's examples.
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const OLD_SECRET = `whsec_${Buffer.from('an older key of 24 bytes').toString('base64')}`;
const MSG_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const options = standardProvider.parseOptions(undefined, 'options');
const body = jsonBody({ type: 'invoice.paid', data: { id: 'in_1', customer: 'cus_2' } });

function officialHeaders(payload: Buffer, secret: string, at = NOW, id = MSG_ID): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new StandardWebhook(secret).sign(id, at, payload.toString('utf8')),
  };
}

function verify(headers: RequestHeaders, rawBody = body, secrets = [SECRET], now = NOW) {
  return standardProvider.verify({ headers, rawBody, secrets, now, options });
}

describe('standard provider', () => {
  it('verifies a signature made by standardwebhooks Webhook#sign and reads the id header and body type', () => {
    const result = expectOk(verify(officialHeaders(body, SECRET)));
    expect(result.deliveryId).toBe(MSG_ID);
    expect(result.eventType).toBe('invoice.paid');
    expect(result.timestamp).toEqual(new Date(NOW_SECONDS * 1000));
  });

  it('verifies svix-* headers signed by svix Webhook#sign', () => {
    const signature = new SvixWebhook(SECRET).sign(MSG_ID, NOW, body.toString('utf8'));
    const headers = { 'svix-id': MSG_ID, 'svix-timestamp': String(NOW_SECONDS), 'svix-signature': signature };
    const result = expectOk(verify(headers));
    expect(result.deliveryId).toBe(MSG_ID);
  });

  it('produces headers that standardwebhooks and svix verify accept', () => {
    const now = new Date();
    const headers = standardProvider.sign({ rawBody: body, secret: SECRET, now, options, deliveryId: MSG_ID });
    expect(new StandardWebhook(SECRET).verify(body.toString('utf8'), headers)).toEqual(JSON.parse(body.toString('utf8')));
    expect(new SvixWebhook(SECRET).verify(body.toString('utf8'), headers)).toEqual(JSON.parse(body.toString('utf8')));
    expect(() => new StandardWebhook(OLD_SECRET).verify(body.toString('utf8'), headers)).toThrow();
  });

  it('accepts a secret without the whsec_ prefix, as the reference library does', () => {
    expectOk(verify(officialHeaders(body, SECRET), body, [SECRET.slice('whsec_'.length)]));
  });

  it('finds a matching v1 among several entries and skips other versions', () => {
    const good = officialHeaders(body, SECRET);
    const other = officialHeaders(body, OLD_SECRET)['webhook-signature'];
    expectOk(verify({ ...good, 'webhook-signature': `v1a,bm90IGFuIGVkMjU1MTkgc2ln ${other} ${good['webhook-signature']}` }));
  });

  it('verifies with the second secret of a rotation', () => {
    expectOk(verify(officialHeaders(body, OLD_SECRET), body, [SECRET, OLD_SECRET]));
  });

  it('reports each missing header', () => {
    const headers = officialHeaders(body, SECRET);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      const { [name]: _dropped, ...rest } = headers;
      expectFailure(verify(rest), 'missing_header');
    }
    expectFailure(verify({}), 'missing_header');
  });

  it('reports a signature list with no version,signature entry and a non-numeric timestamp as malformed', () => {
    const headers = officialHeaders(body, SECRET);
    const bare = headers['webhook-signature']!.slice(3);
    expectFailure(verify({ ...headers, 'webhook-signature': bare }), 'malformed_header', [bare]);
    expectFailure(verify({ ...headers, 'webhook-timestamp': '2025-06-01T12:00:00Z' }), 'malformed_header');
  });

  it('reports another key, a wrong length, bad base64 and a v1a-only list as bad_signature', () => {
    const other = officialHeaders(body, OLD_SECRET);
    expectFailure(verify(other), 'bad_signature', [SECRET, OLD_SECRET, other['webhook-signature']!.slice(3)]);
    const headers = officialHeaders(body, SECRET);
    for (const signature of ['v1,AAAA', 'v1,!!!notbase64!!!', 'v1a,AAAA', `v1,${headers['webhook-signature']!.slice(3)}AAAA`]) {
      expectFailure(verify({ ...headers, 'webhook-signature': signature }), 'bad_signature');
    }
  });

  it('rejects a body changed by one byte and a changed message id', () => {
    const headers = officialHeaders(body, SECRET);
    expectFailure(verify(headers, tamperOneByte(body)), 'bad_signature');
    expectFailure(verify({ ...headers, 'webhook-id': 'msg_other' }), 'bad_signature');
  });

  it('rejects timestamps more than 300 s old or ahead', () => {
    expectFailure(verify(officialHeaders(body, SECRET, new Date(NOW.getTime() - 301_000))), 'stale_timestamp');
    expectFailure(verify(officialHeaders(body, SECRET, new Date(NOW.getTime() + 301_000))), 'future_timestamp');
    expectOk(verify(officialHeaders(body, SECRET, new Date(NOW.getTime() + 299_000))));
  });

  it('verifies the raw bytes of a body that is not UTF-8', () => {
    const headers = standardProvider.sign({ rawBody: NON_UTF8_BODY, secret: SECRET, now: NOW, options });
    const result = expectOk(verify(headers, NON_UTF8_BODY));
    expect(result.eventType).toBeNull();
    expectFailure(verify(headers, tamperOneByte(NON_UTF8_BODY, 3)), 'bad_signature');
  });

  it('reports missing_secret when no secret is usable base64', () => {
    expectFailure(verify(officialHeaders(body, SECRET), body, []), 'missing_secret');
    expectFailure(verify(officialHeaders(body, SECRET), body, ['whsec_not*base64']), 'missing_secret');
  });

  it('rejects secrets that are not whsec_ base64 at config time', () => {
    expect(standardProvider.checkSecret('whsec_not*base64')).not.toBeNull();
    expect(standardProvider.checkSecret('whsec_')).not.toBeNull();
    expect(standardProvider.checkSecret(SECRET)).toBeNull();
    expect(standardWebhooksKey(SECRET)?.length).toBe(24);
  });
});
