// GitHub: `X-Hub-Signature-256: sha256=<hex>`, HMAC-SHA256 of the raw body (JSON or
// form-encoded alike); delivery id `X-GitHub-Delivery`, event type `X-GitHub-Event`.

import { randomUUID } from 'node:crypto';
import { hmacDigest } from './hmac-digest.js';
import { readHeader } from './header-value.js';
import { verifyFailure, type Provider, type RequestHeaders, type VerifyFailure, type VerifyResult } from './provider.js';
import { readOptionsObject } from './provider-options.js';
import { decodeSignature } from './signature-encoding.js';
import { timingSafeEqual } from './timing-safe-equal.js';
import { usableSecrets } from './usable-secrets.js';

const SIGNATURE_HEADER = 'x-hub-signature-256';
// Still sent beside the SHA-256 one; never trusted, but it is a signature all the same.
const LEGACY_SIGNATURE_HEADER = 'x-hub-signature';
const DELIVERY_HEADER = 'x-github-delivery';
const EVENT_HEADER = 'x-github-event';
const SIGNATURE_PREFIX = 'sha256=';

/** The hex digest of X-Hub-Signature-256, or the failure a missing or malformed header is. */
function readSignatureHex(headers: RequestHeaders): string | VerifyFailure {
  const header = readHeader(headers, SIGNATURE_HEADER);
  if (header === undefined) return verifyFailure('missing_header', 'The X-Hub-Signature-256 header is missing.');
  if (!header.startsWith(SIGNATURE_PREFIX)) {
    return verifyFailure('malformed_header', 'The X-Hub-Signature-256 header does not start with "sha256=".');
  }
  return header.slice(SIGNATURE_PREFIX.length);
}

/** The `github` provider takes no options. */
export type GithubOptions = Record<string, never>;

/**
 * The `github` provider. Only the SHA-256 header is accepted: the legacy SHA-1
 * `X-Hub-Signature` is still sent, but trusting it would weaken every source to SHA-1.
 */
export const githubProvider: Provider<GithubOptions> = {
  name: 'github',
  requiresSecret: true,

  secretHeaders() {
    return [SIGNATURE_HEADER, LEGACY_SIGNATURE_HEADER];
  },

  routingHeaders() {
    return [DELIVERY_HEADER, EVENT_HEADER];
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
    const signatureHex = readSignatureHex(input.headers);
    if (typeof signatureHex !== 'string') return signatureHex;
    const received = decodeSignature(signatureHex, 'hex');
    const matches =
      received !== null &&
      secrets.some((secret) => timingSafeEqual(received, hmacDigest('sha256', secret, [input.rawBody])));
    if (!matches) return verifyFailure('bad_signature', 'X-Hub-Signature-256 does not match the source secrets.');
    return { ok: true, ...githubProvider.identify(input) };
  },

  verifyHeaders(input) {
    // GitHub signs no timestamp: only the header's presence and prefix can be judged.
    const signatureHex = readSignatureHex(input.headers);
    return typeof signatureHex === 'string' ? null : signatureHex;
  },

  identify(input) {
    return {
      deliveryId: readHeader(input.headers, DELIVERY_HEADER) ?? null,
      eventType: readHeader(input.headers, EVENT_HEADER) ?? null,
    };
  },

  hasDeliveryId() {
    return true;
  },

  sign(input) {
    const signature = hmacDigest('sha256', input.secret, [input.rawBody]).toString('hex');
    return {
      [SIGNATURE_HEADER]: `${SIGNATURE_PREFIX}${signature}`,
      [DELIVERY_HEADER]: input.deliveryId ?? randomUUID(),
      [EVENT_HEADER]: input.eventType ?? 'ping',
    };
  },

  challengeResponse() {
    return null;
  },
};
