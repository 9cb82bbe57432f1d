// Polar: Standard Webhooks headers and signature, but the HMAC key is the secret's UTF-8
// bytes exactly as Polar shows it, prefix and all, not a base64-decoded `whsec_` payload.

import { randomUUID } from 'node:crypto';
import type { Provider } from './provider.js';
import { readTimestampOptions, type TimestampOptions } from './provider-options.js';
import { signStandardWebhook, STANDARD_WEBHOOKS_MEMBERS, verifyStandardWebhook } from './standard-webhooks-scheme.js';

/** Options of the `polar` provider. */
export type PolarOptions = TimestampOptions;

/**
 * Polar's key for a secret. `@polar-sh/sdk`'s `validateEvent` base64-encodes the secret's
 * UTF-8 bytes and hands that to `standardwebhooks`, which decodes it again: the net key is
 * the UTF-8 bytes. (A base64 string can never start with `whsec_`, so nothing is stripped.)
 */
export function polarKey(secret: string): Buffer | null {
  return secret === '' ? null : Buffer.from(secret, 'utf8');
}

/** The `polar` provider. */
export const polarProvider: Provider<PolarOptions> = {
  name: 'polar',
  requiresSecret: true,
  ...STANDARD_WEBHOOKS_MEMBERS,

  parseOptions: readTimestampOptions,

  checkSecret(secret) {
    return secret === '' ? 'is empty' : null;
  },

  verify(input) {
    return verifyStandardWebhook(input, polarKey);
  },

  hasDeliveryId() {
    return true;
  },

  sign(input) {
    const key = polarKey(input.secret);
    if (key === null) throw new Error('The Polar secret is empty.');
    return signStandardWebhook(key, input.deliveryId ?? `msg_${randomUUID()}`, input.now, input.rawBody);
  },

  challengeResponse() {
    return null;
  },
};
