// Signing secrets of outgoing endpoints: Standard Webhooks `whsec_` + base64 of random
// bytes, made here and shown to the user once (endpoints.add, rotateSecret).

import { randomBytes } from 'node:crypto';

/** 24 random bytes (192 bits), the length Svix's secrets carry. */
const SECRET_BYTES = 24;

export function generateEndpointSecret(): string {
  return `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`;
}
