// The provider registry: look a provider up by the name a source's config uses, validate
// its options and secrets at start (ConfigError naming the key), and bind them for ingress.

import { ConfigError } from '../core/errors.js';
import { githubProvider } from './github.js';
import { hmacProvider } from './hmac.js';
import { noneProvider } from './none.js';
import { polarProvider } from './polar.js';
import { SECRET_HEADERS } from './secret-headers.js';
import type { EventIdentity, Provider, RequestHeaders, VerifyFailure, VerifyResult } from './provider.js';
import { shopifyProvider } from './shopify.js';
import { slackProvider } from './slack.js';
import { standardProvider } from './standard.js';
import { stripeProvider } from './stripe.js';

export type { EventIdentity, Provider, RequestHeaders, VerifyFailureReason, VerifyResult } from './provider.js';
export { VERIFY_FAILURE_REASONS } from './provider.js';
export { SECRET_HEADERS };

/** Every provider by its config name. */
export const PROVIDERS = {
  stripe: stripeProvider,
  github: githubProvider,
  standard: standardProvider,
  polar: polarProvider,
  shopify: shopifyProvider,
  slack: slackProvider,
  hmac: hmacProvider,
  none: noneProvider,
} as const;

/** A provider name a source may use. */
export type ProviderName = keyof typeof PROVIDERS;

/** Every provider name, in registry order. */
export const PROVIDER_NAMES = Object.keys(PROVIDERS) as readonly ProviderName[];

/** True when `name` is a registered provider. */
export function isProviderName(name: unknown): name is ProviderName {
  return typeof name === 'string' && Object.prototype.hasOwnProperty.call(PROVIDERS, name);
}

/** The provider registered as `name`, with its options type erased for generic callers. */
export function getProvider(name: ProviderName): Provider<unknown> {
  return PROVIDERS[name] as unknown as Provider<unknown>;
}

function requireProvider(name: unknown, key: string): Provider<unknown> {
  if (!isProviderName(name)) {
    throw new ConfigError(key, `must be one of ${PROVIDER_NAMES.map((n) => `'${n}'`).join(', ')}`);
  }
  return getProvider(name);
}

/**
 * Check a provider's options and return them normalized (defaults filled in, header names
 * lower-cased).
 * @param keyPrefix config path of the options object, e.g. `sources.shop.options`.
 * @throws ConfigError naming the bad key (`sources.shop.options.algorithm`).
 * @example validateProviderOptions('hmac', { header: 'X-Sig' }, 'sources.ci.options')
 */
export function validateProviderOptions(name: ProviderName, options: unknown, keyPrefix = 'options'): unknown {
  return getProvider(name).parseOptions(options, keyPrefix);
}

/**
 * Check a source's secrets for its provider: a non-empty array of usable secrets, or none
 * at all for `none`. Messages name the key (`sources.stripe.secrets[1]`), never the value.
 * @throws ConfigError naming the bad key.
 */
export function validateProviderSecrets(name: ProviderName, secrets: unknown, keyPrefix = 'secrets'): string[] {
  const provider = getProvider(name);
  if (!provider.requiresSecret) {
    if (secrets === undefined || (Array.isArray(secrets) && secrets.length === 0)) return [];
    throw new ConfigError(keyPrefix, `provider '${name}' verifies nothing, so secrets would be ignored; remove them or choose a provider that checks them`);
  }
  if (!Array.isArray(secrets) || secrets.length === 0) {
    throw new ConfigError(keyPrefix, `provider '${name}' needs at least one secret (a list, so a rotation can hold the old and new one)`);
  }
  secrets.forEach((secret: unknown, index) => {
    const key = `${keyPrefix}[${index}]`;
    // `[process.env.X]` with X unset is the usual cause, so say so.
    if (typeof secret !== 'string' || secret === '') throw new ConfigError(key, 'is empty or not a string (is its environment variable set?)');
    const problem = provider.checkSecret(secret);
    if (problem !== null) throw new ConfigError(key, problem);
  });
  return secrets as string[];
}

/** The provider part of a source's config, as written by the user. */
export interface SourceProviderConfig {
  readonly provider: unknown;
  readonly options?: unknown;
  readonly secrets?: unknown;
}

/** A provider bound to one source's checked options and secrets: what the ingress calls. */
export interface ConfiguredProvider {
  readonly name: ProviderName;
  /** The normalized options (never the secrets). */
  readonly options: unknown;
  /** False for `hmac`/`none` without an id header or path: the source cannot dedupe (warn at start). */
  readonly hasDeliveryId: boolean;
  /** `SECRET_HEADERS` plus the headers this source's options name: never stored, forwarded or logged. */
  readonly secretHeaders: ReadonlySet<string>;
  /** Headers the delivery id and event type come from, every spelling; a repeat is ambiguous. */
  readonly routingHeaders: readonly string[];
  verify(input: { readonly headers: RequestHeaders; readonly rawBody: Buffer; readonly now: Date }): VerifyResult;
  /** The failure `verify` is bound to report from the headers alone, or null (see Provider). */
  verifyHeaders(input: { readonly headers: RequestHeaders; readonly now: Date }): VerifyFailure | null;
  identify(input: { readonly headers: RequestHeaders; readonly rawBody: Buffer }): EventIdentity;
  /** Headers that make `rawBody` verify, signed with the source's first secret. */
  sign(input: { readonly rawBody: Buffer; readonly now: Date; readonly deliveryId?: string; readonly eventType?: string }): Record<string, string>;
  challengeResponse(rawBody: Buffer): string | null;
}

/**
 * Validate a source's provider, options and secrets and bind them. The secrets live only in
 * this closure, so logging the returned object cannot print them.
 * @param keyPrefix config path of the source, e.g. `sources.stripe`.
 * @param checkSecrets false: check provider and options only, and bind no secret.
 * @throws ConfigError naming `<keyPrefix>.provider`, `<keyPrefix>.options.<key>` or `<keyPrefix>.secrets[i]`.
 * @example const stripe = configureProvider({ provider: 'stripe', secrets: [env.STRIPE_WEBHOOK_SECRET] }, 'sources.stripe');
 */
export function configureProvider(
  config: SourceProviderConfig,
  keyPrefix: string,
  { checkSecrets = true }: { readonly checkSecrets?: boolean } = {},
): ConfiguredProvider {
  const provider = requireProvider(config.provider, `${keyPrefix}.provider`);
  const name = config.provider as ProviderName;
  const options = provider.parseOptions(config.options, `${keyPrefix}.options`);
  // Unchecked (a read-only CLI command's config), it is bound to no secret: verify refuses all.
  // A frozen copy: a later change to the config's array cannot reach this binding, so a
  // provider may keep what it derives from these secrets for as long as the array lives.
  const secrets = Object.freeze(checkSecrets ? [...validateProviderSecrets(name, config.secrets, `${keyPrefix}.secrets`)] : []);
  return {
    name,
    options,
    hasDeliveryId: provider.hasDeliveryId(options),
    secretHeaders: new Set([...SECRET_HEADERS, ...provider.secretHeaders(options)]),
    routingHeaders: provider.routingHeaders(options),
    verify: ({ headers, rawBody, now }) => provider.verify({ headers, rawBody, now, secrets, options }),
    verifyHeaders: ({ headers, now }) => provider.verifyHeaders({ headers, now, options }),
    identify: ({ headers, rawBody }) => provider.identify({ headers, rawBody, options }),
    sign: ({ rawBody, now, deliveryId, eventType }) =>
      provider.sign({ rawBody, now, options, secret: secrets[0] ?? '', deliveryId, eventType }),
    challengeResponse: (rawBody) => provider.challengeResponse(rawBody),
  };
}
