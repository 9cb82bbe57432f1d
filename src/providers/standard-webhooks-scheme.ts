// The Standard Webhooks scheme shared by `standard` and `polar`, which differ only in how
// a secret becomes the HMAC key: `webhook-id`, `webhook-timestamp` and a space-separated
// `webhook-signature` list of `v1,<base64>` over `${id}.${timestamp}.${body}`.

import { hmacDigest } from './hmac-digest.js';
import { readHeader } from './header-value.js';
import { ownField, parseJsonBody } from './json-body.js';
import { idText } from './json-path.js';
import {
  isVerifyFailure,
  verifyFailure,
  type EventIdentity,
  type HeaderCheckInput,
  type IdentifyInput,
  type Provider,
  type RequestHeaders,
  type VerifyFailure,
  type VerifyInput,
  type VerifyResult,
} from './provider.js';
import type { TimestampOptions } from './provider-options.js';
import { decodeSignature } from './signature-encoding.js';
import { timingSafeEqual } from './timing-safe-equal.js';
import { checkTimestampWindow, parseUnixSeconds } from './timestamp-window.js';
import { usableSecrets } from './usable-secrets.js';

/** The header names of one dialect of the scheme. */
interface HeaderNames {
  readonly id: string;
  readonly timestamp: string;
  readonly signature: string;
}

const STANDARD_HEADERS: HeaderNames = { id: 'webhook-id', timestamp: 'webhook-timestamp', signature: 'webhook-signature' };
// Svix, the scheme's origin, still sends its own prefix; the values are identical.
const SVIX_HEADERS: HeaderNames = { id: 'svix-id', timestamp: 'svix-timestamp', signature: 'svix-signature' };

/** The signature header of both dialects. */
const SECRET_HEADERS: readonly string[] = [STANDARD_HEADERS.signature, SVIX_HEADERS.signature];
/** The delivery id header of both dialects (the type is in the signed body). */
const ROUTING_HEADERS: readonly string[] = [STANDARD_HEADERS.id, SVIX_HEADERS.id];

/** Turns one configured secret into HMAC key bytes, or null when it cannot be one. */
export type StandardKeyDerivation = (secret: string) => Buffer | null;

/** The dialect a request uses: `webhook-*` when any of those is present, else `svix-*`. */
function headerNamesOf(headers: RequestHeaders): HeaderNames {
  const hasStandard = Object.values(STANDARD_HEADERS).some((name) => readHeader(headers, name) !== undefined);
  if (hasStandard) return STANDARD_HEADERS;
  const hasSvix = Object.values(SVIX_HEADERS).some((name) => readHeader(headers, name) !== undefined);
  return hasSvix ? SVIX_HEADERS : STANDARD_HEADERS;
}

function standardSignature(key: Uint8Array, id: string, timestampText: string, rawBody: Buffer): Buffer {
  return hmacDigest('sha256', key, [`${id}.${timestampText}.`, rawBody]);
}

interface StandardSignedHeaders {
  readonly names: HeaderNames;
  readonly id: string;
  readonly timestampText: string;
  readonly signedAtSeconds: number;
  /** The decoded `v1` signatures (null where an entry is not base64). */
  readonly received: readonly (Buffer | null)[];
}

/** The id, timestamp and signature headers' parts, or the failure a missing or malformed one is. */
function readSignedHeaders(headers: RequestHeaders): StandardSignedHeaders | VerifyFailure {
  const names = headerNamesOf(headers);
  const id = readHeader(headers, names.id);
  const timestampText = readHeader(headers, names.timestamp);
  const signatureList = readHeader(headers, names.signature);
  if (id === undefined) return verifyFailure('missing_header', `The ${names.id} header is missing.`);
  if (timestampText === undefined) return verifyFailure('missing_header', `The ${names.timestamp} header is missing.`);
  if (signatureList === undefined) return verifyFailure('missing_header', `The ${names.signature} header is missing.`);
  const signedAtSeconds = parseUnixSeconds(timestampText);
  if (signedAtSeconds === null) return verifyFailure('malformed_header', `The ${names.timestamp} header is not a Unix timestamp.`);

  const entries = signatureList.split(' ').filter((entry) => entry !== '');
  const parsed = entries.map((entry) => {
    const comma = entry.indexOf(',');
    return comma > 0 ? { version: entry.slice(0, comma), text: entry.slice(comma + 1) } : null;
  });
  if (parsed.every((entry) => entry === null)) {
    return verifyFailure('malformed_header', `The ${names.signature} header has no "version,signature" entry.`);
  }
  const received = parsed
    .filter((entry) => entry !== null && entry.version === 'v1')
    .map((entry) => decodeSignature(entry!.text, 'base64'));
  return { names, id, timestampText, signedAtSeconds, received };
}

/**
 * Verify a Standard Webhooks request with keys from `deriveKey`. Entries of other versions
 * (`v1a`, asymmetric) are skipped, as the reference library does; we only hold HMAC keys.
 */
export function verifyStandardWebhook(
  input: VerifyInput<TimestampOptions>,
  deriveKey: StandardKeyDerivation,
): VerifyResult {
  const secrets = usableSecrets(input.secrets);
  if (!Array.isArray(secrets)) return secrets;
  const keys = secrets.map(deriveKey).filter((key): key is Buffer => key !== null && key.length > 0);
  if (keys.length === 0) return verifyFailure('missing_secret', 'None of the source secrets is a usable Standard Webhooks key.');

  const signed = readSignedHeaders(input.headers);
  if (isVerifyFailure(signed)) return signed;
  const matches = keys.some((key) => {
    const expected = standardSignature(key, signed.id, signed.timestampText, input.rawBody);
    return signed.received.some((signature) => signature !== null && timingSafeEqual(signature, expected));
  });
  if (!matches) return verifyFailure('bad_signature', `No v1 signature in ${signed.names.signature} matches the source secrets.`);

  const outside = checkTimestampWindow(signed.signedAtSeconds, input.now, input.options.toleranceMs, `The ${signed.names.timestamp} header`);
  if (outside) return outside;
  return { ok: true, ...identifyStandardWebhook(input), timestamp: new Date(signed.signedAtSeconds * 1000) };
}

/** What the headers of a Standard Webhooks request already refuse, whatever its body. */
export function verifyStandardWebhookHeaders(input: HeaderCheckInput<TimestampOptions>): VerifyFailure | null {
  const signed = readSignedHeaders(input.headers);
  if (isVerifyFailure(signed)) return signed;
  return checkTimestampWindow(signed.signedAtSeconds, input.now, input.options.toleranceMs, `The ${signed.names.timestamp} header`);
}

/**
 * The members every provider of this scheme shares (`standard`, `polar`): they differ
 * only in how a secret becomes the key, so in `verify` and `sign`.
 */
export const STANDARD_WEBHOOKS_MEMBERS = {
  secretHeaders: (): readonly string[] => SECRET_HEADERS,
  routingHeaders: (): readonly string[] => ROUTING_HEADERS,
  verifyHeaders: verifyStandardWebhookHeaders,
  identify: identifyStandardWebhook,
} satisfies Partial<Provider<TimestampOptions>>;

/** Delivery id from the id header, event type from the body's `type`. */
export function identifyStandardWebhook(input: IdentifyInput<unknown>): EventIdentity {
  const names = headerNamesOf(input.headers);
  return {
    deliveryId: readHeader(input.headers, names.id) ?? null,
    eventType: idText(ownField(parseJsonBody(input.rawBody), 'type')),
  };
}

/** `webhook-*` headers that make `rawBody` verify under `key`. */
export function signStandardWebhook(key: Uint8Array, id: string, now: Date, rawBody: Buffer): Record<string, string> {
  const timestampText = String(Math.floor(now.getTime() / 1000));
  return {
    [STANDARD_HEADERS.id]: id,
    [STANDARD_HEADERS.timestamp]: timestampText,
    [STANDARD_HEADERS.signature]: `v1,${standardSignature(key, id, timestampText, rawBody).toString('base64')}`,
  };
}
