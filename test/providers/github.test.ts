// The github provider against signatures made by @octokit/webhooks-methods 6.0.0.

import { sign as octokitSign, verify as octokitVerify } from '@octokit/webhooks-methods';
import { describe, expect, it } from 'vitest';
import { githubProvider } from '../../src/providers/github.js';
import type { RequestHeaders } from '../../src/providers/provider.js';
import { expectFailure, expectOk, jsonBody, NON_UTF8_BODY, NOW, tamperOneByte } from './provider-test-kit.js';

const SECRET = 'It\'s a Secret to Everybody';
const OLD_SECRET = 'previous-github-secret';
const options = githubProvider.parseOptions(undefined, 'options');
const body = jsonBody({ ref: 'refs/heads/main', after: 'c0ffee', repository: { full_name: 'acme/site' } });
const ids = { 'x-github-delivery': '72d3162e-cc78-11e3-81ab-4c9367dc0958', 'x-github-event': 'push' };

function verify(headers: RequestHeaders, rawBody = body, secrets = [SECRET]) {
  return githubProvider.verify({ headers, rawBody, secrets, now: NOW, options });
}

describe('github provider', () => {
  it('verifies a signature made by @octokit/webhooks-methods sign and reads delivery and event headers', async () => {
    const signature = await octokitSign(SECRET, body.toString('utf8'));
    const result = expectOk(verify({ 'x-hub-signature-256': signature, ...ids }));
    expect(result.deliveryId).toBe(ids['x-github-delivery']);
    expect(result.eventType).toBe('push');
    expect(result.timestamp).toBeUndefined();
  });

  it('produces a signature that @octokit/webhooks-methods verify accepts', async () => {
    const headers = githubProvider.sign({ rawBody: body, secret: SECRET, now: NOW, options, deliveryId: 'd-1', eventType: 'push' });
    expect(await octokitVerify(SECRET, body.toString('utf8'), headers['x-hub-signature-256']!)).toBe(true);
    expect(headers['x-github-delivery']).toBe('d-1');
    expect(headers['x-github-event']).toBe('push');
  });

  it('verifies a form-encoded body over its raw bytes', async () => {
    const form = Buffer.from(`payload=${encodeURIComponent(body.toString('utf8'))}`);
    expectOk(verify({ 'x-hub-signature-256': await octokitSign(SECRET, form.toString('utf8')), ...ids }, form));
  });

  it('verifies with the second secret of a rotation', async () => {
    expectOk(verify({ 'x-hub-signature-256': await octokitSign(OLD_SECRET, body.toString('utf8')) }, body, [SECRET, OLD_SECRET]));
  });

  it('reports a missing signature header, ignoring the legacy SHA-1 one', async () => {
    expectFailure(verify({ 'x-hub-signature': 'sha1=0000', ...ids }), 'missing_header');
  });

  it('reports a header without the sha256= prefix as malformed', async () => {
    const signature = await octokitSign(SECRET, body.toString('utf8'));
    expectFailure(verify({ 'x-hub-signature-256': signature.replace('sha256=', 'sha1=') }), 'malformed_header', [signature.slice(7)]);
    expectFailure(verify({ 'x-hub-signature-256': signature.slice(7) }), 'malformed_header', [signature.slice(7)]);
  });

  it('reports another secret, a wrong length and non-hex as bad_signature', async () => {
    const other = await octokitSign(OLD_SECRET, body.toString('utf8'));
    expectFailure(verify({ 'x-hub-signature-256': other }), 'bad_signature', [SECRET, OLD_SECRET, other.slice(7)]);
    expectFailure(verify({ 'x-hub-signature-256': 'sha256=abcd' }), 'bad_signature');
    expectFailure(verify({ 'x-hub-signature-256': `sha256=${'g'.repeat(64)}` }), 'bad_signature');
  });

  it('rejects a body changed by one byte', async () => {
    expectFailure(verify({ 'x-hub-signature-256': await octokitSign(SECRET, body.toString('utf8')) }, tamperOneByte(body)), 'bad_signature');
  });

  it('verifies the raw bytes of a body that is not UTF-8', () => {
    const headers = githubProvider.sign({ rawBody: NON_UTF8_BODY, secret: SECRET, now: NOW, options });
    expectOk(verify(headers, NON_UTF8_BODY));
    expectFailure(verify(headers, tamperOneByte(NON_UTF8_BODY, 1)), 'bad_signature');
  });

  it('reports missing_secret without secrets', async () => {
    expectFailure(verify({ 'x-hub-signature-256': await octokitSign(SECRET, body.toString('utf8')) }, body, []), 'missing_secret');
  });

  it('refuses options, since it takes none', () => {
    expect(() => githubProvider.parseOptions({ header: 'x' }, 'sources.gh.options')).toThrow('sources.gh.options.header');
  });
});
