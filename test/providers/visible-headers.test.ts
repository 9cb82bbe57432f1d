import { describe, expect, it } from 'vitest';
import { HIDDEN_HEADER_VALUE, isSecretHeader, visibleHeaders } from '../../src/providers/visible-headers.js';

describe('visibleHeaders', () => {
  it('hides every header whose name says it carries a credential, whatever its spelling', () => {
    const secret = ['Authorization', 'x-webhook-token', 'X-Api-Key', 'x-private-key', 'x-access-key', 'x-credentials', 'x-session-id', 'x-auth', 'auth-code', 'stripe-signature'];
    for (const name of secret) expect(isSecretHeader(name), name).toBe(true);
    const plain = ['content-type', 'user-agent', 'x-github-event', 'x-request-id', 'x-author', 'x-oauth-scopes-hint', 'x-keyboard'];
    for (const name of plain) expect(isSecretHeader(name), name).toBe(false);
  });

  it('keeps plain headers as stored, sorted by name, and shows a placeholder for the rest', () => {
    expect(visibleHeaders({ 'x-session-id': 's3cr3t', 'content-type': 'application/json', 'x-private-key': 'k' })).toEqual({
      'content-type': 'application/json',
      'x-private-key': HIDDEN_HEADER_VALUE,
      'x-session-id': HIDDEN_HEADER_VALUE,
    });
  });
});
