// The headers that carry a signature or a credential, for any provider: the one list
// storage, `forward` and log redaction all use. A header no list names but whose name
// says it carries a credential (`x-webhook-token`) is caught by core/secret-names.ts. A list written out rather than gathered
// from the providers, so the logger, which every process loads, does not load every
// provider's code to learn it (issue 18, worker RSS); test/providers/registry.test.ts
// fails when a provider reads a signature header this list lacks.

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
