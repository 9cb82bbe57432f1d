// Shopify: `X-Shopify-Hmac-Sha256` is the base64 HMAC-SHA256 of the raw body keyed with the
// app's client secret; delivery id `X-Shopify-Webhook-Id`, topic `X-Shopify-Topic`.

import { randomUUID } from 'node:crypto';
import { hmacDigest } from './hmac-digest.js';
import { readHeader } from './header-value.js';
import { verifyFailure, type Provider, type RequestHeaders, type VerifyFailure, type VerifyResult } from './provider.js';
import { readOptionsObject } from './provider-options.js';
import { decodeSignature } from './signature-encoding.js';
import { timingSafeEqual } from './timing-safe-equal.js';
import { usableSecrets } from './usable-secrets.js';

/** The `shopify` provider takes no options. */
export type ShopifyOptions = Record<string, never>;

// Shopify's newer "events" webhooks send the same headers without the `X-` prefix
// (`shopify-hmac-sha256`, ...; see ShopifyEventsHeader in @shopify/shopify-api), so each
// lookup tries the classic name first, then the unprefixed one.
function readShopifyHeader(headers: RequestHeaders, suffix: string): string | undefined {
  return readHeader(headers, `x-shopify-${suffix}`) ?? readHeader(headers, `shopify-${suffix}`);
}

/** The X-Shopify-Hmac-Sha256 value (either spelling), or the failure its absence is. */
function readHmacHeader(headers: RequestHeaders): string | VerifyFailure {
  return readShopifyHeader(headers, 'hmac-sha256') ?? verifyFailure('missing_header', 'The X-Shopify-Hmac-Sha256 header is missing.');
}

/** Both spellings of a Shopify header, classic first. */
function shopifyHeaderNames(suffix: string): string[] {
  return [`x-shopify-${suffix}`, `shopify-${suffix}`];
}

/**
 * The `shopify` provider. The scheme signs no timestamp, so it has no replay window of its
 * own; dedupe on the webhook id is what stops a replayed delivery from running twice.
 */
export const shopifyProvider: Provider<ShopifyOptions> = {
  name: 'shopify',
  requiresSecret: true,

  secretHeaders() {
    return shopifyHeaderNames('hmac-sha256');
  },

  routingHeaders() {
    return ['webhook-id', 'event-id', 'topic'].flatMap(shopifyHeaderNames);
  },

  parseOptions(raw, keyPrefix) {
    readOptionsObject(raw, keyPrefix, []);
    return {};
  },

  checkSecret(secret) {
    return secret.length === 0 ? 'is empty' : null;
  },

  verify(input): VerifyResult {
    const secrets = usableSecrets(input.secrets);
    if (!Array.isArray(secrets)) return secrets;
    const header = readHmacHeader(input.headers);
    if (typeof header !== 'string') return header;
    const received = decodeSignature(header, 'base64');
    const matches =
      received !== null &&
      secrets.some((secret) => timingSafeEqual(received, hmacDigest('sha256', secret, [input.rawBody])));
    if (!matches) return verifyFailure('bad_signature', 'X-Shopify-Hmac-Sha256 does not match the source secrets.');
    return { ok: true, ...shopifyProvider.identify(input) };
  },

  verifyHeaders(input) {
    // No timestamp is signed, and any base64 might be the digest: only absence is certain.
    const header = readHmacHeader(input.headers);
    return typeof header === 'string' ? null : header;
  },

  identify(input) {
    // SPEC §5 dedupes on the webhook id, which Shopify keeps across retries. The event id is
    // shared by every webhook one event causes (one per subscription), so it is only the
    // fallback when no webhook id was sent. Shopify's "ignore duplicates" guide suggests the
    // event id instead; switching would merge two subscriptions pointed at one source.
    const deliveryId = readShopifyHeader(input.headers, 'webhook-id') ?? readShopifyHeader(input.headers, 'event-id');
    return { deliveryId: deliveryId ?? null, eventType: readShopifyHeader(input.headers, 'topic') ?? null };
  },

  hasDeliveryId() {
    return true;
  },

  sign(input) {
    return {
      'x-shopify-hmac-sha256': hmacDigest('sha256', input.secret, [input.rawBody]).toString('base64'),
      'x-shopify-webhook-id': input.deliveryId ?? randomUUID(),
      'x-shopify-topic': input.eventType ?? 'orders/create',
      // Shopify always sends these; its own verifier refuses a delivery without them.
      'x-shopify-shop-domain': 'mailroom-test.myshopify.com',
      'x-shopify-api-version': '2025-01',
      'x-shopify-triggered-at': input.now.toISOString(),
    };
  },

  challengeResponse() {
    return null;
  },
};
