// The none provider: always verifies, and finds ids only where configured.

import { describe, expect, it } from 'vitest';
import { noneProvider } from '../../src/providers/none.js';
import { expectOk, jsonBody, NON_UTF8_BODY, NOW } from './provider-test-kit.js';

const body = jsonBody({ meta: { delivery: 'd-1' }, event: 'ping' });

describe('none provider', () => {
  it('verifies anything, without secrets, and has no delivery id unless configured', () => {
    const options = noneProvider.parseOptions(undefined, 'options');
    const result = expectOk(noneProvider.verify({ headers: {}, rawBody: NON_UTF8_BODY, secrets: [], now: NOW, options }));
    expect(result).toEqual({ ok: true, deliveryId: null, eventType: null });
    expect(noneProvider.hasDeliveryId(options)).toBe(false);
    expect(noneProvider.requiresSecret).toBe(false);
  });

  it('reads the delivery id from a JSON path and the type from a header', () => {
    const options = noneProvider.parseOptions({ idPath: '$.meta.delivery', typeHeader: 'X-Event' }, 'options');
    const result = expectOk(noneProvider.verify({ headers: { 'x-event': 'ping' }, rawBody: body, secrets: [], now: NOW, options }));
    expect(result.deliveryId).toBe('d-1');
    expect(result.eventType).toBe('ping');
    expect(noneProvider.hasDeliveryId(options)).toBe(true);
  });

  it('signs only the configured id and type headers', () => {
    const options = noneProvider.parseOptions({ idHeader: 'x-id', typePath: '$.event' }, 'options');
    expect(noneProvider.sign({ rawBody: body, secret: '', now: NOW, options, deliveryId: 'd-2', eventType: 'ping' })).toEqual({ 'x-id': 'd-2' });
  });

  it('refuses options that belong to hmac', () => {
    expect(() => noneProvider.parseOptions({ header: 'x-sig' }, 'sources.internal.options')).toThrow('sources.internal.options.header');
  });
});
