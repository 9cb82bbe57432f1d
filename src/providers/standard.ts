// Standard Webhooks (https://www.standardwebhooks.com), also sent by Svix with `svix-*`
// headers: the secret is `whsec_<base64>` and the HMAC key is the base64-decoded part.

import { randomUUID } from 'node:crypto';
import type { Provider } from './provider.js';
import { readTimestampOptions, type TimestampOptions } from './provider-options.js';
import { signStandardWebhook, STANDARD_WEBHOOKS_MEMBERS, verifyStandardWebhook } from './standard-webhooks-scheme.js';

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** Options of the `standard` provider. */
export type StandardOptions = TimestampOptions;

/**
 * The HMAC key of a Standard Webhooks secret: the base64 after an optional `whsec_`
 * (the reference library accepts both), or null when that is not canonical base64.
 */
export function standardWebhooksKey(secret: string): Buffer | null {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  if (encoded === '' || !BASE64.test(encoded)) return null;
  return Buffer.from(encoded, 'base64');
}

/** The `standard` provider. */
export const standardProvider: Provider<StandardOptions> = {
  name: 'standard',
  requiresSecret: true,
  ...STANDARD_WEBHOOKS_MEMBERS,

  parseOptions: readTimestampOptions,

  checkSecret(secret) {
    return standardWebhooksKey(secret) === null ? 'is not whsec_ followed by base64 (or that base64 alone, as the Standard Webhooks libraries take it)' : null;
  },

  verify(input) {
    return verifyStandardWebhook(input, standardWebhooksKey);
  },

  hasDeliveryId() {
    return true;
  },

  sign(input) {
    const key = standardWebhooksKey(input.secret);
    if (key === null) throw new Error('The secret is not a Standard Webhooks secret (whsec_ followed by base64).');
    return signStandardWebhook(key, input.deliveryId ?? `msg_${randomUUID()}`, input.now, input.rawBody);
  },

  challengeResponse() {
    return null;
  },
};
