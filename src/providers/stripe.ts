// Stripe: `Stripe-Signature: t=<unix>,v1=<hex>[,v1=<hex>...]`, HMAC-SHA256 of `${t}.${body}`
// keyed with the whole `whsec_...` string. The delivery id and type come from the body.

import { hmacDigest } from './hmac-digest.js';
import { readHeader } from './header-value.js';
import { ownField, parseJsonBody } from './json-body.js';
import { idText } from './json-path.js';
import { isVerifyFailure, verifyFailure, type EventIdentity, type Provider, type RequestHeaders, type VerifyFailure, type VerifyResult } from './provider.js';
import { readTimestampOptions, type TimestampOptions } from './provider-options.js';
import { decodeSignature } from './signature-encoding.js';
import { timingSafeEqual } from './timing-safe-equal.js';
import { checkTimestampWindow, parseUnixSeconds } from './timestamp-window.js';
import { usableSecrets } from './usable-secrets.js';

const SIGNATURE_HEADER = 'stripe-signature';
const STRIPE_TIMESTAMP_NAME = 'The Stripe-Signature timestamp';

/** Options of the `stripe` provider. */
export type StripeOptions = TimestampOptions;

interface StripeSignatureHeader {
  readonly timestampText: string;
  readonly signatures: readonly string[];
}

/** The parts of a Stripe-Signature header, or a message saying what is wrong with it. */
function parseSignatureHeader(value: string): StripeSignatureHeader | string {
  const timestamps: string[] = [];
  const signatures: string[] = [];
  for (const item of value.split(',')) {
    const eq = item.indexOf('=');
    if (eq <= 0) return 'an element is not key=value';
    const key = item.slice(0, eq).trim();
    const text = item.slice(eq + 1).trim();
    if (key === 't') timestamps.push(text);
    else if (key === 'v1') signatures.push(text);
    // v0 (test-mode legacy) and unknown schemes are skipped, as Stripe's libraries do.
  }
  if (timestamps.length !== 1) return timestamps.length === 0 ? 'no t= timestamp' : 'more than one t= timestamp';
  if (signatures.length === 0) return 'no v1= signature';
  return { timestampText: timestamps[0]!, signatures };
}

interface StripeSignedHeader extends StripeSignatureHeader {
  readonly signedAtSeconds: number;
}

/** The Stripe-Signature header's parts, or the failure a missing or malformed one is. */
function readSignedHeader(headers: RequestHeaders): StripeSignedHeader | VerifyFailure {
  const header = readHeader(headers, SIGNATURE_HEADER);
  if (header === undefined) return verifyFailure('missing_header', 'The Stripe-Signature header is missing.');
  const parsed = parseSignatureHeader(header);
  if (typeof parsed === 'string') return verifyFailure('malformed_header', `The Stripe-Signature header is malformed: ${parsed}.`);
  const signedAtSeconds = parseUnixSeconds(parsed.timestampText);
  if (signedAtSeconds === null) return verifyFailure('malformed_header', 'The Stripe-Signature t= value is not a Unix timestamp.');
  return { ...parsed, signedAtSeconds };
}

function stripeSignature(secret: string, timestampText: string, rawBody: Buffer): Buffer {
  return hmacDigest('sha256', secret, [`${timestampText}.`, rawBody]);
}

/** A Stripe event's id and type, from its parsed body. */
function identityOf(body: unknown): EventIdentity {
  return { deliveryId: idText(ownField(body, 'id')), eventType: idText(ownField(body, 'type')) };
}

/**
 * The `stripe` provider. Signature first, then timestamp: a stale but correctly signed
 * request is reported as `stale_timestamp` (a replay), unsigned garbage as `bad_signature`.
 */
export const stripeProvider: Provider<StripeOptions> = {
  name: 'stripe',
  requiresSecret: true,

  secretHeaders() {
    return [SIGNATURE_HEADER];
  },

  routingHeaders() {
    // The id and type are in the signed body.
    return [];
  },

  parseOptions: readTimestampOptions,

  checkSecret(secret) {
    if (secret.length === 0) return 'is empty';
    // An API key pasted in its place would fail every signature, each a 401 to Stripe.
    if (/^(sk|rk|pk)_(live|test)_/.test(secret)) {
      return "is a Stripe API key, not a webhook signing secret: use the endpoint's signing secret (whsec_…, on its page under Developers → Webhooks)";
    }
    return null;
  },

  verify(input): VerifyResult {
    const secrets = usableSecrets(input.secrets);
    if (!Array.isArray(secrets)) return secrets;
    const parsed = readSignedHeader(input.headers);
    if (isVerifyFailure(parsed)) return parsed;

    const received = parsed.signatures.map((text) => decodeSignature(text, 'hex'));
    const matches = secrets.some((secret) => {
      const expected = stripeSignature(secret, parsed.timestampText, input.rawBody);
      return received.some((signature) => signature !== null && timingSafeEqual(signature, expected));
    });
    if (!matches) return verifyFailure('bad_signature', 'No v1 signature in Stripe-Signature matches the source secrets.');

    const outside = checkTimestampWindow(parsed.signedAtSeconds, input.now, input.options.toleranceMs, STRIPE_TIMESTAMP_NAME);
    if (outside) return outside;
    const parsedBody = parseJsonBody(input.rawBody);
    return { ok: true, ...identityOf(parsedBody), timestamp: new Date(parsed.signedAtSeconds * 1000), parsedBody };
  },

  verifyHeaders(input) {
    const parsed = readSignedHeader(input.headers);
    if (isVerifyFailure(parsed)) return parsed;
    return checkTimestampWindow(parsed.signedAtSeconds, input.now, input.options.toleranceMs, STRIPE_TIMESTAMP_NAME);
  },

  identify(input) {
    return identityOf(parseJsonBody(input.rawBody));
  },

  hasDeliveryId() {
    return true;
  },

  sign(input) {
    const timestampText = String(Math.floor(input.now.getTime() / 1000));
    const signature = stripeSignature(input.secret, timestampText, input.rawBody).toString('hex');
    return { [SIGNATURE_HEADER]: `t=${timestampText},v1=${signature}` };
  },

  challengeResponse() {
    return null;
  },
};
