// The configurable hmac provider: each algorithm and encoding against node:crypto, the
// prefix, id and type lookups, and option validation naming the bad key.

import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import { hmacProvider, type HmacOptions } from '../../src/providers/hmac.js';
import type { RequestHeaders } from '../../src/providers/provider.js';
import { expectFailure, expectOk, jsonBody, NON_UTF8_BODY, NOW, tamperOneByte } from './provider-test-kit.js';

const SECRET = 'ci-webhook-secret-0001';
const OLD_SECRET = 'ci-webhook-secret-0000';
const body = jsonBody({ id: 'job-42', kind: 'build.finished', data: { status: 'green' } });

function opts(raw: Record<string, unknown>): HmacOptions {
  return hmacProvider.parseOptions(raw, 'sources.ci.options');
}

function verify(options: HmacOptions, headers: RequestHeaders, rawBody = body, secrets = [SECRET]) {
  return hmacProvider.verify({ headers, rawBody, secrets, now: NOW, options });
}

describe('hmac provider', () => {
  for (const algorithm of ['sha256', 'sha1', 'sha512'] as const) {
    for (const encoding of ['hex', 'base64'] as const) {
      it(`verifies ${algorithm}/${encoding} digests computed by node:crypto`, () => {
        const options = opts({ header: 'X-Signature', algorithm, encoding });
        const digest = createHmac(algorithm, SECRET).update(body).digest(encoding);
        expectOk(verify(options, { 'x-signature': digest }));
        expectFailure(verify(options, { 'x-signature': digest }, tamperOneByte(body)), 'bad_signature', [SECRET, digest]);
      });
    }
  }

  it('requires the configured prefix and reads id and type from a JSON path', () => {
    const options = opts({ header: 'x-hub-sig', prefix: 'sha256=', idPath: '$.id', typePath: '$.kind' });
    const digest = createHmac('sha256', SECRET).update(body).digest('hex');
    const result = expectOk(verify(options, { 'x-hub-sig': `sha256=${digest}` }));
    expect(result.deliveryId).toBe('job-42');
    expect(result.eventType).toBe('build.finished');
    expectFailure(verify(options, { 'x-hub-sig': digest }), 'malformed_header', [digest]);
  });

  it('prefers the id and type headers over JSON paths', () => {
    const options = opts({ header: 'x-sig', idHeader: 'X-Request-Id', idPath: '$.id', typeHeader: 'x-event' });
    const headers = hmacProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options, deliveryId: 'req-7', eventType: 'deploy' });
    expect(headers['x-request-id']).toBe('req-7');
    const result = expectOk(verify(options, headers));
    expect(result.deliveryId).toBe('req-7');
    expect(result.eventType).toBe('deploy');
  });

  it('has no delivery id, and says so, when neither idHeader nor idPath is set', () => {
    const options = opts({ header: 'x-sig' });
    expect(hmacProvider.hasDeliveryId(options)).toBe(false);
    expect(hmacProvider.hasDeliveryId(opts({ header: 'x-sig', idPath: '$.id' }))).toBe(true);
    const result = expectOk(verify(options, hmacProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options })));
    expect(result.deliveryId).toBeNull();
  });

  it('reports missing header, wrong length, bad encoding and missing secret', () => {
    const options = opts({ header: 'x-sig', encoding: 'base64' });
    expectFailure(verify(options, {}), 'missing_header');
    expectFailure(verify(options, { 'x-sig': 'AAAA' }), 'bad_signature');
    expectFailure(verify(options, { 'x-sig': '%%%' }), 'bad_signature');
    expectFailure(verify(options, hmacProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options }), body, []), 'missing_secret');
  });

  it('verifies with the second secret of a rotation and over non-UTF-8 bytes', () => {
    const options = opts({ header: 'x-sig', algorithm: 'sha512' });
    const headers = hmacProvider.sign({ rawBody: NON_UTF8_BODY, secret: OLD_SECRET, now: NOW, options });
    expectOk(verify(options, headers, NON_UTF8_BODY, [SECRET, OLD_SECRET]));
    expectFailure(verify(options, headers, tamperOneByte(NON_UTF8_BODY, 0), [SECRET, OLD_SECRET]), 'bad_signature');
  });

  it('fills defaults and lower-cases header names', () => {
    expect(opts({ header: 'X-Signature' })).toEqual({ header: 'x-signature', algorithm: 'sha256', encoding: 'hex', prefix: '' });
  });

  it('refuses bad options with a ConfigError naming the key', () => {
    const cases: [unknown, string][] = [
      [{}, 'sources.ci.options.header'],
      [undefined, 'sources.ci.options.header'],
      [{ header: 'x-sig', algorithm: 'md5' }, 'sources.ci.options.algorithm'],
      [{ header: 'x-sig', encoding: 'base32' }, 'sources.ci.options.encoding'],
      [{ header: 'bad header' }, 'sources.ci.options.header'],
      [{ header: 'x-sig', idPath: 'id' }, 'sources.ci.options.idPath'],
      [{ header: 'x-sig', typePath: '$..type' }, 'sources.ci.options.typePath'],
      [{ header: 'x-sig', idHeader: 42 }, 'sources.ci.options.idHeader'],
      [{ header: 'x-sig', idpath: '$.id' }, 'sources.ci.options.idpath'],
      ['x-sig', 'sources.ci.options'],
    ];
    for (const [raw, key] of cases) {
      let caught: unknown;
      try {
        hmacProvider.parseOptions(raw, 'sources.ci.options');
      } catch (error) {
        caught = error;
      }
      expect(caught, JSON.stringify(raw)).toBeInstanceOf(ConfigError);
      expect((caught as ConfigError).key).toBe(key);
      expect((caught as ConfigError).code).toBe('MR_ERR_CONFIG_INVALID');
    }
  });
});
