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
  if (hasAnyHeader(headers, STANDARD_HEADERS)) return STANDARD_HEADERS;
  return hasAnyHeader(headers, SVIX_HEADERS) ? SVIX_HEADERS : STANDARD_HEADERS;
}

function hasAnyHeader(headers: RequestHeaders, names: HeaderNames): boolean {
  return readHeader(headers, names.id) !== undefined || readHeader(headers, names.timestamp) !== undefined || readHeader(headers, names.signature) !== undefined;
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

/**
 * The id, timestamp and signature headers' parts, or the failure a missing or malformed
 * one is. `decode` false leaves `received` empty: the check before the body needs only
 * the syntax, and the signatures are decoded once, in verify.
 */
function readSignedHeaders(headers: RequestHeaders, decode: boolean): StandardSignedHeaders | VerifyFailure {
  const names = headerNamesOf(headers);
  const id = readHeader(headers, names.id);
  const timestampText = readHeader(headers, names.timestamp);
  const signatureList = readHeader(headers, names.signature);
  if (id === undefined) return verifyFailure('missing_header', `The ${names.id} header is missing.`);
  if (timestampText === undefined) return verifyFailure('missing_header', `The ${names.timestamp} header is missing.`);
  if (signatureList === undefined) return verifyFailure('missing_header', `The ${names.signature} header is missing.`);
  const signedAtSeconds = parseUnixSeconds(timestampText);
  if (signedAtSeconds === null) return verifyFailure('malformed_header', `The ${names.timestamp} header is not a Unix timestamp.`);

  // One pass over the space-separated entries, with no array per step: this runs on
  // every request, before the body and again in verify.
  const received: (Buffer | null)[] = [];
  let hasEntry = false;
  for (const entry of signatureList.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma <= 0) continue;
    hasEntry = true;
    if (decode && comma === 2 && entry.startsWith('v1')) received.push(decodeSignature(entry.slice(3), 'base64'));
  }
  if (!hasEntry) return verifyFailure('malformed_header', `The ${names.signature} header has no "version,signature" entry.`);
  return { names, id, timestampText, signedAtSeconds, received };
}

// The keys of a source's secrets, per derivation: a source's bound secrets are one array
// for its lifetime, and deriving (a base64 check and decode per secret) on every request
// cost more than the header parse. Weak, so a dropped source takes its keys with it.
const derivedKeys = new WeakMap<StandardKeyDerivation, WeakMap<readonly string[], Buffer[] | VerifyFailure>>();

function keysOf(secrets: readonly string[], deriveKey: StandardKeyDerivation): Buffer[] | VerifyFailure {
  let bySecrets = derivedKeys.get(deriveKey);
  if (bySecrets === undefined) derivedKeys.set(deriveKey, (bySecrets = new WeakMap()));
  let keys = bySecrets.get(secrets);
  if (keys === undefined) {
    const usable = usableSecrets(secrets);
    keys = Array.isArray(usable) ? usable.map(deriveKey).filter((key): key is Buffer => key !== null && key.length > 0) : usable;
    bySecrets.set(secrets, keys);
  }
  return keys;
}

/**
 * Verify a Standard Webhooks request with keys from `deriveKey`. Entries of other versions
 * (`v1a`, asymmetric) are skipped, as the reference library does; we only hold HMAC keys.
 */
export function verifyStandardWebhook(
  input: VerifyInput<TimestampOptions>,
  deriveKey: StandardKeyDerivation,
): VerifyResult {
  const keys = keysOf(input.secrets, deriveKey);
  if (!Array.isArray(keys)) return keys;
  if (keys.length === 0) return verifyFailure('missing_secret', 'None of the source secrets is a usable Standard Webhooks key.');

  const signed = readSignedHeaders(input.headers, true);
  if (isVerifyFailure(signed)) return signed;
  const matches = keys.some((key) => {
    const expected = standardSignature(key, signed.id, signed.timestampText, input.rawBody);
    return signed.received.some((signature) => signature !== null && timingSafeEqual(signature, expected));
  });
  if (!matches) return verifyFailure('bad_signature', `No v1 signature in ${signed.names.signature} matches the source secrets.`);

  const outside = checkTimestampWindow(signed.signedAtSeconds, input.now, input.options.toleranceMs, `The ${signed.names.timestamp} header`);
  if (outside) return outside;
  // What identify would read, from the parse already made.
  const parsedBody = parseJsonBody(input.rawBody);
  return { ok: true, deliveryId: signed.id, eventType: eventTypeOf(parsedBody), timestamp: new Date(signed.signedAtSeconds * 1000), parsedBody };
}

/** What the headers of a Standard Webhooks request already refuse, whatever its body. */
export function verifyStandardWebhookHeaders(input: HeaderCheckInput<TimestampOptions>): VerifyFailure | null {
  const signed = readSignedHeaders(input.headers, false);
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
    eventType: eventTypeOf(parseJsonBody(input.rawBody)),
  };
}

function eventTypeOf(body: unknown): string | null {
  return idText(ownField(body, 'type'));
}

/** `webhook-*` headers that make `rawBody` verify under each of `keys`. */
export function signStandardWebhook(keys: Uint8Array | readonly Uint8Array[], id: string, now: Date, rawBody: Buffer): Record<string, string> {
  const timestampText = String(Math.floor(now.getTime() / 1000));
  // Several keys during a secret rotation: one `v1,` entry each, space-separated, so a
  // receiver holding either secret verifies.
  const list = keys instanceof Uint8Array ? [keys] : keys;
  return {
    [STANDARD_HEADERS.id]: id,
    [STANDARD_HEADERS.timestamp]: timestampText,
    [STANDARD_HEADERS.signature]: list.map((key) => `v1,${standardSignature(key, id, timestampText, rawBody).toString('base64')}`).join(' '),
  };
}
