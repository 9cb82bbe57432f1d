import { describe, expect, it } from 'vitest';
import { SECRET_FIELD_NAMES, isSecretName, nameWords } from '../../src/core/secret-names.js';
import { SECRET_HEADERS } from '../../src/providers/secret-headers.js';

describe('isSecretName', () => {
  it('holds credential-bearing header names secret, however they are spelt', () => {
    const headers = [
      'Authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-webhook-token', 'X-Api-Key', 'x-apikey', 'x-private-key', 'x-access-key',
      'x-credentials', 'x-session-id', 'x-auth', 'auth-code', 'stripe-signature', 'x-hub-signature-256', 'x-shopify-hmac-sha256',
      'x-webhook-key', 'x-signing-key', 'x-passphrase', 'x-gitlab-token', 'x-amz-security-token', 'webhook-secret',
    ];
    for (const name of headers) expect(isSecretName(name), name).toBe(true);
    for (const name of SECRET_HEADERS) expect(isSecretName(name), name).toBe(true);
  });

  it('holds credential-bearing JSON keys secret, snake_case and camelCase alike', () => {
    for (const key of ['secret', 'password', 'apiKey', 'api_key', 'private_key', 'privateKey', 'access_token', 'accessToken', 'client_secret', 'clientSecret', 'refresh_token', 'passwd', 'jwt']) {
      expect(isSecretName(key), key).toBe(true);
    }
    for (const name of SECRET_FIELD_NAMES) expect(isSecretName(name), name).toBe(true);
  });

  it('leaves plain names visible, those that merely contain a secret word among them', () => {
    const plain = [
      'content-type', 'user-agent', 'x-github-event', 'x-request-id', 'x-author', 'x-oauth-scopes-hint', 'x-keyboard',
      'key', 'idempotency_key', 'limitKey', 'keys', 'monkey', 'max_tokens', 'total_tokens', 'passenger', 'authored_at', 'email',
    ];
    for (const name of plain) expect(isSecretName(name), name).toBe(false);
  });

  it('splits names into lower-case words at separators and camelCase', () => {
    expect(nameWords('X-Hub-Signature-256')).toEqual(['x', 'hub', 'signature', '256']);
    expect(nameWords('clientSecret')).toEqual(['client', 'secret']);
    expect(nameWords('refresh_token.value')).toEqual(['refresh', 'token', 'value']);
  });
});
