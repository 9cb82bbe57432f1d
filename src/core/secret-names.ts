// The one rule for "this name says its value is a credential", for header names
// (`x-webhook-token`, `X-Api-Key`) and for JSON keys (`client_secret`, `privateKey`) alike:
// ingress does not store such a header, `forward` does not pass it on, and every display
// (dashboard, portal, CLI) hides such a header or body field. Names are compared by words
// (split at `-`, `_`, `.`, spaces and camelCase), so `x-author` and `x-keyboard` stay
// visible while `x-signing-key` and `access_token` do not.

/** A word that marks a credential wherever it appears in the name. */
const SECRET_WORDS = new Set([
  'authorization',
  'auth',
  'bearer',
  'cookie',
  'signature',
  'hmac',
  'secret',
  'secrets',
  'token',
  'password',
  'passwd',
  'passphrase',
  'credential',
  'credentials',
  'session',
  'jwt',
  // Spelt as one word: `x-apikey`, `privatekey`.
  'apikey',
  'privatekey',
  'accesskey',
  'secretkey',
]);

/** Words that make a following `key` a credential (`api key`, `signing key`); a bare `key` is not one (an idempotency key). */
const KEY_QUALIFIERS = new Set(['api', 'private', 'access', 'signing', 'webhook', 'secret', 'client', 'encryption', 'master', 'license']);

/** The name's words, lower-cased: `X-Hub-Signature-256` → x, hub, signature, 256; `clientSecret` → client, secret. */
export function nameWords(name: string): string[] {
  // Header names arrive lower-cased: only a name with capitals needs the camelCase split.
  const lower = name.toLowerCase();
  const spaced = lower === name ? name : name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return spaced.split(/[^a-z0-9]+/).filter((word) => word !== '');
}

/**
 * Every name isSecretName holds secret contains one of these; most names (content-type,
 * user-agent, x-github-event) fail this one test and are never split (ingress asks for
 * every header of every request).
 */
const MAY_BE_SECRET = /auth|bearer|cookie|signature|hmac|secret|token|passw|passphrase|credential|session|jwt|key/i;

/** True when a header name or JSON key says its value is (or may be) a credential. */
export function isSecretName(name: string): boolean {
  if (!MAY_BE_SECRET.test(name)) return false;
  const words = nameWords(name);
  return words.some((word, index) => SECRET_WORDS.has(word) || (word === 'key' && index > 0 && KEY_QUALIFIERS.has(words[index - 1]!)));
}

/**
 * Body and option keys the logger redacts by path (pino redacts paths, not a rule), at the
 * top and one level down. Each is a name isSecretName holds secret (a test checks).
 */
export const SECRET_FIELD_NAMES: readonly string[] = [
  'secret',
  'secrets',
  'token',
  'password',
  'passphrase',
  'apiKey',
  'api_key',
  'accessToken',
  'access_token',
  'refreshToken',
  'refresh_token',
  'clientSecret',
  'client_secret',
  'privateKey',
  'private_key',
  'signingKey',
  'signing_key',
];
