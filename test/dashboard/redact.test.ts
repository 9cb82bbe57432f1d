// What the dashboard hides in payloads, results and details: configured dot paths (with
// `*` for any key) and, at any depth, keys named like a secret; the stored value is untouched.
// And what a failed request's log line keeps of its path.

import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../src/config/validate-config.js';
import { pathForLog } from '../../src/dashboard/dashboard-http.js';
import { REDACTED, redactedBodyText, redactJson } from '../../src/dashboard/redact.js';

describe('redactJson', () => {
  it('hides configured paths and secret-named keys at any depth, in a copy', () => {
    const payload = {
      card: { number: '4242424242424242', brand: 'visa' },
      customers: [{ email: 'a@example.com', name: 'A' }],
      nested: { deeper: { apiKey: 'k', password: 'p', keep: 1 } },
      token: 't',
      oauth: { access_token: 'a', client_secret: 'c', private_key: 'pk', max_tokens: 1024, idempotency_key: 'order-7' },
    };
    const shown = redactJson(payload, ['card.number', 'customers.email', '*.deeper.keep']);
    expect(shown).toEqual({
      card: { number: REDACTED, brand: 'visa' },
      customers: [{ email: REDACTED, name: 'A' }],
      nested: { deeper: { apiKey: REDACTED, password: REDACTED, keep: REDACTED } },
      token: REDACTED,
      oauth: { access_token: REDACTED, client_secret: REDACTED, private_key: REDACTED, max_tokens: 1024, idempotency_key: 'order-7' },
    });
    expect(payload.card.number).toBe('4242424242424242');
  });

  it('passes scalars and null through', () => {
    expect(redactJson(null)).toBeNull();
    expect(redactJson('text', ['x'])).toBe('text');
  });

  it('takes dashboard.redactPaths from the config, and names a bad one', () => {
    expect(validateConfig({ dashboard: { redactPaths: ['card.number'] } }).dashboard).toEqual({ redactPaths: ['card.number'] });
    expect(() => validateConfig({ dashboard: { redactPaths: 'card.number' } })).toThrow(/dashboard\.redactPaths/);
  });

  it('shows an event body as JSON only with its secrets hidden, a byte-order mark or not, and other bodies as text', () => {
    const secret = { password: 'pw_never_shown', note: 'shown' };
    for (const raw of [Buffer.from(JSON.stringify(secret)), Buffer.from(`\uFEFF${JSON.stringify(secret)}`)]) {
      const text = redactedBodyText(raw);
      expect(text).not.toContain('pw_never_shown');
      expect(JSON.parse(text)).toEqual({ password: REDACTED, note: 'shown' });
    }
    expect(redactedBodyText(Buffer.from('a=1&b=2'))).toBe('a=1&b=2');
    expect(redactedBodyText(Buffer.from([0xff, 0xfe, 0x7b]))).toContain('not UTF-8');
  });
});

describe('pathForLog', () => {
  it('logs a failed request’s path without its query or a portal link’s token', () => {
    expect(pathForLog('/dashboard/jobs?q=secret')).toBe('/dashboard/jobs');
    expect(pathForLog('/portal/enter/eyJ0ZW5hbnQiOiJhY21lIn0.c2lnbmF0dXJl')).toBe('/portal/enter/[redacted]');
    expect(pathForLog('/portal/enter/abc/more?x=1')).toBe('/portal/enter/[redacted]/more');
    expect(pathForLog('/portal/endpoints/12')).toBe('/portal/endpoints/12');
    expect(pathForLog(undefined)).toBe('/');
  });
});
