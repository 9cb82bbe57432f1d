// Slack: `X-Slack-Signature: v0=<hex>`, HMAC-SHA256 of `v0:${X-Slack-Request-Timestamp}:${body}`
// keyed with the signing secret. Bodies are JSON (Events API) or form-encoded (interactivity,
// slash commands); the signature covers the raw bytes either way.

import { hmacDigest } from './hmac-digest.js';
import { readHeader } from './header-value.js';
import { ownField, parseJsonBody } from './json-body.js';
import { idText } from './json-path.js';
import { isVerifyFailure, verifyFailure, type Provider, type RequestHeaders, type VerifyFailure, type VerifyResult } from './provider.js';
import { readTimestampOptions, type TimestampOptions } from './provider-options.js';
import { decodeSignature } from './signature-encoding.js';
import { timingSafeEqual } from './timing-safe-equal.js';
import { checkTimestampWindow, parseUnixSeconds } from './timestamp-window.js';
import { usableSecrets } from './usable-secrets.js';

const SIGNATURE_HEADER = 'x-slack-signature';
const TIMESTAMP_HEADER = 'x-slack-request-timestamp';
const SIGNATURE_PREFIX = 'v0=';

/** Options of the `slack` provider. */
export type SlackOptions = TimestampOptions;

function slackSignature(secret: string, timestampText: string, rawBody: Buffer): Buffer {
  return hmacDigest('sha256', secret, [`v0:${timestampText}:`, rawBody]);
}

/**
 * The body as an object: JSON for the Events API, or the JSON in the `payload` field of a
 * form-encoded interactivity request. Slash commands (plain form fields) give undefined.
 */
function slackBody(headers: RequestHeaders, rawBody: Buffer): unknown {
  const json = parseJsonBody(rawBody);
  if (json !== undefined) return json;
  const contentType = readHeader(headers, 'content-type') ?? '';
  if (!contentType.toLowerCase().startsWith('application/x-www-form-urlencoded')) return undefined;
  const payload = new URLSearchParams(rawBody.toString('utf8')).get('payload');
  return payload === null ? undefined : parseJsonBody(Buffer.from(payload, 'utf8'));
}

interface SlackSignedHeaders {
  readonly signatureHex: string;
  readonly timestampText: string;
  readonly signedAtSeconds: number;
}

/** The signature and timestamp headers' parts, or the failure a missing or malformed one is. */
function readSignedHeaders(headers: RequestHeaders): SlackSignedHeaders | VerifyFailure {
  const signature = readHeader(headers, SIGNATURE_HEADER);
  if (signature === undefined) return verifyFailure('missing_header', 'The X-Slack-Signature header is missing.');
  const timestampText = readHeader(headers, TIMESTAMP_HEADER);
  if (timestampText === undefined) return verifyFailure('missing_header', 'The X-Slack-Request-Timestamp header is missing.');
  if (!signature.startsWith(SIGNATURE_PREFIX)) {
    return verifyFailure('malformed_header', 'The X-Slack-Signature header does not start with "v0=".');
  }
  const signedAtSeconds = parseUnixSeconds(timestampText);
  if (signedAtSeconds === null) return verifyFailure('malformed_header', 'The X-Slack-Request-Timestamp header is not a Unix timestamp.');
  return { signatureHex: signature.slice(SIGNATURE_PREFIX.length), timestampText, signedAtSeconds };
}

/** The `slack` provider. Slack's own SDK checks only staleness; we also refuse the future. */
export const slackProvider: Provider<SlackOptions> = {
  name: 'slack',
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
    return secret.length === 0 ? 'is empty' : null;
  },

  verify(input): VerifyResult {
    const secrets = usableSecrets(input.secrets);
    if (!Array.isArray(secrets)) return secrets;
    const signed = readSignedHeaders(input.headers);
    if (isVerifyFailure(signed)) return signed;

    const received = decodeSignature(signed.signatureHex, 'hex');
    const matches =
      received !== null &&
      secrets.some((secret) => timingSafeEqual(received, slackSignature(secret, signed.timestampText, input.rawBody)));
    if (!matches) return verifyFailure('bad_signature', 'X-Slack-Signature does not match the source secrets.');

    const outside = checkTimestampWindow(signed.signedAtSeconds, input.now, input.options.toleranceMs, 'X-Slack-Request-Timestamp');
    if (outside) return outside;
    return { ok: true, ...slackProvider.identify(input), timestamp: new Date(signed.signedAtSeconds * 1000) };
  },

  verifyHeaders(input) {
    const signed = readSignedHeaders(input.headers);
    if (isVerifyFailure(signed)) return signed;
    return checkTimestampWindow(signed.signedAtSeconds, input.now, input.options.toleranceMs, 'X-Slack-Request-Timestamp');
  },

  identify(input) {
    const body = slackBody(input.headers, input.rawBody);
    // Events API callbacks carry the interesting type inside `event` (`app_mention`);
    // envelopes without one (`url_verification`, interactivity) use their own `type`.
    const eventType = idText(ownField(ownField(body, 'event'), 'type')) ?? idText(ownField(body, 'type'));
    return { deliveryId: idText(ownField(body, 'event_id')), eventType };
  },

  hasDeliveryId() {
    // Events API callbacks have `event_id`; interactivity and slash commands have none.
    return true;
  },

  sign(input) {
    const timestampText = String(Math.floor(input.now.getTime() / 1000));
    return {
      [SIGNATURE_HEADER]: `${SIGNATURE_PREFIX}${slackSignature(input.secret, timestampText, input.rawBody).toString('hex')}`,
      [TIMESTAMP_HEADER]: timestampText,
    };
  },

  challengeResponse(rawBody) {
    const body = parseJsonBody(rawBody);
    if (ownField(body, 'type') !== 'url_verification') return null;
    const challenge = ownField(body, 'challenge');
    return typeof challenge === 'string' ? challenge : null;
  },
};
