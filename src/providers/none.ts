// No verification at all, for trusted internal senders. Only chosen explicitly
// (`provider: 'none'`); ids come from a configured header or JSON path, as for `hmac`.

import { randomUUID } from 'node:crypto';
import {
  hasConfiguredDeliveryId,
  identifyConfigured,
  IDENTITY_OPTION_KEYS,
  identityHeaderNames,
  identityHeaders,
  readIdentityOptions,
  type IdentityOptions,
} from './configured-identity.js';
import { readOptionsObject } from './provider-options.js';
import type { Provider } from './provider.js';

/** Options of the `none` provider. */
export type NoneOptions = IdentityOptions;

/** The `none` provider: every request verifies; secrets are ignored. */
export const noneProvider: Provider<NoneOptions> = {
  name: 'none',
  requiresSecret: false,

  secretHeaders() {
    return [];
  },

  routingHeaders: identityHeaderNames,

  parseOptions(raw, keyPrefix) {
    return readIdentityOptions(readOptionsObject(raw, keyPrefix, IDENTITY_OPTION_KEYS), keyPrefix);
  },

  checkSecret() {
    return null;
  },

  verify(input) {
    return { ok: true, ...identifyConfigured(input) };
  },

  verifyHeaders() {
    return null;
  },

  identify: identifyConfigured,

  hasDeliveryId: hasConfiguredDeliveryId,

  sign(input) {
    return identityHeaders(input.options, input.deliveryId ?? randomUUID(), input.eventType);
  },

  challengeResponse() {
    return null;
  },
};
