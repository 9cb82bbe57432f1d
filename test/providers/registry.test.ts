// The provider registry: lookup by name, secret and option validation that names the key,
// and a configured provider that verifies what it signs without exposing its secrets.

import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/core/errors.js';
import {
  configureProvider,
  getProvider,
  isProviderName,
  PROVIDER_NAMES,
  PROVIDERS,
  SECRET_HEADERS,
  validateProviderOptions,
  validateProviderSecrets,
} from '../../src/providers/index.js';
import { expectFailure, expectOk, jsonBody, NOW } from './provider-test-kit.js';

const SECRETS: Record<string, string> = {
  stripe: 'whsec_registry_test_secret',
  github: 'gh-registry-secret',
  standard: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  polar: 'polar_whs_registry',
  shopify: 'shpss_registry',
  slack: 'slack-registry-secret',
  hmac: 'hmac-registry-secret',
};

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('provider registry', () => {
  it('lists the eight providers of SPEC §5, each registered under its own name', () => {
    expect([...PROVIDER_NAMES].sort()).toEqual(['github', 'hmac', 'none', 'polar', 'shopify', 'slack', 'standard', 'stripe']);
    for (const name of PROVIDER_NAMES) expect(getProvider(name).name).toBe(name);
    expect(isProviderName('toString')).toBe(false);
    expect(isProviderName('svix')).toBe(false);
  });

  it('lists every spelling of every signature header a provider reads, and the usual credentials', () => {
    expect([...SECRET_HEADERS].sort()).toEqual([
      'authorization',
      'cookie',
      'proxy-authorization',
      // Shopify's newer events webhooks drop the X- prefix; both spellings carry the HMAC.
      'shopify-hmac-sha256',
      'stripe-signature',
      'svix-signature',
      'webhook-signature',
      'x-api-key',
      'x-hub-signature',
      'x-hub-signature-256',
      'x-shopify-hmac-sha256',
      'x-slack-signature',
    ]);
  });

  it("holds every provider's own signature headers (the list is written out, not gathered)", () => {
    for (const provider of Object.values(PROVIDERS)) {
      for (const name of provider.secretHeaders(null)) expect(SECRET_HEADERS).toContain(name);
    }
  });

  it("adds a source's configured hmac signature header to its secret headers", () => {
    const source = configureProvider({ provider: 'hmac', options: { header: 'X-Build-Signature' }, secrets: ['s'] }, 'sources.ci');
    expect(source.secretHeaders.has('x-build-signature')).toBe(true);
    for (const name of SECRET_HEADERS) expect(source.secretHeaders.has(name)).toBe(true);
  });

  for (const name of PROVIDER_NAMES) {
    it(`configures ${name} and verifies a sample it signs, with the body byte-exact`, () => {
      const options = name === 'hmac' ? { header: 'x-signature', idPath: '$.id' } : name === 'none' ? { idPath: '$.id' } : undefined;
      const secrets = name === 'none' ? undefined : [SECRETS[name]!];
      const source = configureProvider({ provider: name, options, secrets }, `sources.${name}`);
      const rawBody = jsonBody({ id: 'evt_sample', type: 'sample.created', event_id: 'Ev_sample' });
      const headers = source.sign({ rawBody, now: NOW, deliveryId: 'sample-1', eventType: 'sample.created' });
      const result = expectOk(source.verify({ headers, rawBody, now: NOW }));
      expect(result.deliveryId).not.toBeNull();
      expect(source.identify({ headers, rawBody })).toEqual({ deliveryId: result.deliveryId, eventType: result.eventType });
      if (name !== 'none') expectFailure(source.verify({ headers, rawBody: Buffer.concat([rawBody, Buffer.from(' ')]), now: NOW }), 'bad_signature');
      // Secrets stay in the closure: nothing a logger would serialize contains them.
      if (secrets) expect(JSON.stringify(source)).not.toContain(secrets[0]);
    });
  }

  for (const name of PROVIDER_NAMES) {
    it(`names as a routing header of ${name} every header its delivery id or event type is read from`, () => {
      const options = name === 'hmac' ? { header: 'x-signature', idHeader: 'x-request-id', typeHeader: 'x-event' } : name === 'none' ? { idHeader: 'x-request-id' } : undefined;
      const source = configureProvider({ provider: name, options, secrets: name === 'none' ? undefined : [SECRETS[name]!] }, `sources.${name}`);
      const rawBody = jsonBody({ id: 'evt_sample', type: 'sample.created', event_id: 'Ev_sample' });
      const headers = source.sign({ rawBody, now: NOW, deliveryId: 'sample-1', eventType: 'sample.created' });
      const identity = source.identify({ headers, rawBody });
      // A header whose value changes the identity routes the event: a repeat of it is ambiguous.
      const routing = Object.keys(headers).filter((header) => {
        const changed = source.identify({ headers: { ...headers, [header]: 'other' }, rawBody });
        return changed.deliveryId !== identity.deliveryId || changed.eventType !== identity.eventType;
      });
      expect(routing.length > 0 || ['stripe', 'slack'].includes(name)).toBe(true);
      for (const header of routing) expect(source.routingHeaders).toContain(header.toLowerCase());
    });
  }

  it('names the provider key when the provider is unknown', () => {
    expect(configError(() => configureProvider({ provider: 'paypal', secrets: ['x'] }, 'sources.pp')).key).toBe('sources.pp.provider');
    expect(configError(() => configureProvider({ provider: undefined }, 'sources.pp')).key).toBe('sources.pp.provider');
  });

  it('names the secrets key when secrets are missing, empty or unusable, without printing them', () => {
    expect(configError(() => configureProvider({ provider: 'stripe' }, 'sources.stripe')).key).toBe('sources.stripe.secrets');
    expect(configError(() => configureProvider({ provider: 'stripe', secrets: [] }, 'sources.stripe')).key).toBe('sources.stripe.secrets');
    expect(configError(() => validateProviderSecrets('github', ['ok', undefined], 'sources.gh.secrets')).key).toBe('sources.gh.secrets[1]');
    const bad = configError(() => validateProviderSecrets('standard', ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_not*base64!'], 's.secrets'));
    expect(bad.key).toBe('s.secrets[1]');
    expect(bad.message).not.toContain('not*base64');
  });

  it('refuses secrets on none, which would silently ignore them', () => {
    expect(configError(() => configureProvider({ provider: 'none', secrets: ['x'] }, 'sources.int')).key).toBe('sources.int.secrets');
    expect(validateProviderSecrets('none', undefined)).toEqual([]);
  });

  it('names the bad option key under the source', () => {
    expect(configError(() => configureProvider({ provider: 'stripe', secrets: ['whsec_x'], options: { toleranceMs: -1 } }, 'sources.stripe')).key)
      .toBe('sources.stripe.options.toleranceMs');
    expect(configError(() => validateProviderOptions('slack', { tolerance: 5 }, 'sources.slack.options')).key).toBe('sources.slack.options.tolerance');
    expect(validateProviderOptions('standard', { toleranceMs: 60_000 })).toEqual({ toleranceMs: 60_000 });
  });

  it('says when a source cannot dedupe', () => {
    expect(configureProvider({ provider: 'hmac', secrets: ['s'], options: { header: 'x-sig' } }, 'sources.h').hasDeliveryId).toBe(false);
    expect(configureProvider({ provider: 'none' }, 'sources.n').hasDeliveryId).toBe(false);
    expect(configureProvider({ provider: 'github', secrets: ['s'] }, 'sources.g').hasDeliveryId).toBe(true);
  });

  it('answers challenges only for slack', () => {
    const body = jsonBody({ type: 'url_verification', challenge: 'c-1' });
    for (const name of PROVIDER_NAMES) {
      expect(getProvider(name).challengeResponse(body)).toBe(name === 'slack' ? 'c-1' : null);
    }
  });
});
