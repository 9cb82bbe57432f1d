// The headers that carry a signature or a credential, for any provider: the one list
// storage, `forward` and log redaction all use. A list written out rather than gathered
// from the providers, so the logger, which every process loads, does not load every
// provider's code to learn it (issue 18, worker RSS); test/providers/registry.test.ts
// fails when a provider reads a signature header this list lacks.

/**
 * A header name that looks like it carries a credential though no list names it
 * (`x-webhook-token`, `api-key`, `x-gitlab-token`, `x-private-key`, `x-session-id`,
 * `x-auth`): storage, `forward` and every display
 * treat it as one of SECRET_HEADERS, so a sender's own secret header is never stored,
 * passed on or shown.
 */
export const SECRET_LOOKING_HEADER =
  /authorization|cookie|signature|hmac|secret|token|password|credential|session|(?:api|private|access)[-_]?key|(?:^|[-_])auth(?:$|[-_])/i;

/** Headers that carry a credential whatever the provider (and whatever proxy sits in front). */
const CREDENTIAL_HEADERS = ['authorization', 'proxy-authorization', 'cookie', 'x-api-key'];

/**
 * Every spelling of every header that carries a signature or a credential, for any
 * provider, lower-cased. A source adds what its options name (`hmac`'s header), as
 * `ConfiguredProvider.secretHeaders`.
 */
export const SECRET_HEADERS: readonly string[] = [
  ...CREDENTIAL_HEADERS,
  'stripe-signature',
  'x-hub-signature-256',
  'x-hub-signature',
  'webhook-signature',
  'svix-signature',
  'x-shopify-hmac-sha256',
  'shopify-hmac-sha256',
  'x-slack-signature',
];
