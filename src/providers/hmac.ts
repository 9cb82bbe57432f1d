// A configurable HMAC scheme for senders without a provider of their own: which header,
// which algorithm and encoding, an optional prefix (`sha256=`), and where ids live.

import { randomUUID } from 'node:crypto';
import { ConfigError } from '../core/errors.js';
import {
  hasConfiguredDeliveryId,
  identifyConfigured,
  IDENTITY_OPTION_KEYS,
  identityHeaderNames,
  identityHeaders,
  readIdentityOptions,
  type IdentityOptions,
} from './configured-identity.js';
import { hmacDigest, type HmacAlgorithm } from './hmac-digest.js';
import { readHeader } from './header-value.js';
import { verifyFailure, type Provider, type RequestHeaders, type VerifyFailure, type VerifyResult } from './provider.js';
import { readOptionalChoice, readOptionalHeaderName, readOptionalString, readOptionsObject } from './provider-options.js';
import { decodeSignature, type SignatureEncoding } from './signature-encoding.js';
import { timingSafeEqual } from './timing-safe-equal.js';
import { usableSecrets } from './usable-secrets.js';

const ALGORITHMS: readonly HmacAlgorithm[] = ['sha256', 'sha1', 'sha512'];
const ENCODINGS: readonly SignatureEncoding[] = ['hex', 'base64'];

/** Options of the `hmac` provider. */
export interface HmacOptions extends IdentityOptions {
  /** The header carrying the signature (lower-cased on parse). Required. */
  readonly header: string;
  /** @default 'sha256' */
  readonly algorithm: HmacAlgorithm;
  /** How the digest is written. @default 'hex' */
  readonly encoding: SignatureEncoding;
  /** Text before the digest in the header, e.g. `sha256=`. @default '' */
  readonly prefix: string;
}

/** The digest text of the configured header, or the failure a missing or unprefixed one is. */
function readSignatureText(headers: RequestHeaders, options: HmacOptions): string | VerifyFailure {
  const header = readHeader(headers, options.header);
  if (header === undefined) return verifyFailure('missing_header', `The ${options.header} header is missing.`);
  if (!header.startsWith(options.prefix)) return verifyFailure('malformed_header', `The ${options.header} header does not start with "${options.prefix}".`);
  return header.slice(options.prefix.length);
}

/**
 * The `hmac` provider: HMAC of the raw body with the secret's UTF-8 bytes. It signs no
 * timestamp, so only dedupe (an `idHeader` or `idPath`) stops a replay from running twice.
 * @example { provider: 'hmac', options: { header: 'x-signature', prefix: 'sha256=', idPath: '$.id' } }
 */
export const hmacProvider: Provider<HmacOptions> = {
  name: 'hmac',
  requiresSecret: true,

  secretHeaders(options) {
    return options === null ? [] : [options.header];
  },

  routingHeaders: identityHeaderNames,

  parseOptions(raw, keyPrefix) {
    const record = readOptionsObject(raw, keyPrefix, ['header', 'algorithm', 'encoding', 'prefix', ...IDENTITY_OPTION_KEYS]);
    const header = readOptionalHeaderName(record, 'header', keyPrefix);
    if (header === undefined) throw new ConfigError(`${keyPrefix}.header`, 'is required: name the header that carries the signature');
    const prefix = record.prefix === '' ? '' : (readOptionalString(record, 'prefix', keyPrefix) ?? '');
    return {
      header,
      algorithm: readOptionalChoice(record, 'algorithm', keyPrefix, ALGORITHMS) ?? 'sha256',
      encoding: readOptionalChoice(record, 'encoding', keyPrefix, ENCODINGS) ?? 'hex',
      prefix,
      ...readIdentityOptions(record, keyPrefix),
    };
  },

  checkSecret(secret) {
    return secret.length === 0 ? 'is empty' : null;
  },

  verify(input): VerifyResult {
    const secrets = usableSecrets(input.secrets);
    if (!Array.isArray(secrets)) return secrets;
    const { header: headerName, algorithm, encoding } = input.options;
    const signatureText = readSignatureText(input.headers, input.options);
    if (typeof signatureText !== 'string') return signatureText;
    const received = decodeSignature(signatureText, encoding);
    const matches =
      received !== null && secrets.some((secret) => timingSafeEqual(received, hmacDigest(algorithm, secret, [input.rawBody])));
    if (!matches) return verifyFailure('bad_signature', `${headerName} does not match the source secrets.`);
    return { ok: true, ...identifyConfigured(input) };
  },

  verifyHeaders(input) {
    const signatureText = readSignatureText(input.headers, input.options);
    return typeof signatureText === 'string' ? null : signatureText;
  },

  identify: identifyConfigured,

  hasDeliveryId: hasConfiguredDeliveryId,

  sign(input) {
    const { options } = input;
    const digest = hmacDigest(options.algorithm, input.secret, [input.rawBody]).toString(options.encoding);
    return {
      [options.header]: `${options.prefix}${digest}`,
      ...identityHeaders(options, input.deliveryId ?? randomUUID(), input.eventType),
    };
  },

  challengeResponse() {
    return null;
  },
};
