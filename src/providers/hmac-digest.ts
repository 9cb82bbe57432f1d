// HMAC over a signed payload assembled from text and raw bytes, so the body is hashed
// exactly as received: decoding it to a string first would mangle non-UTF-8 bytes.

import { createHmac } from 'node:crypto';

/** The HMAC algorithms a scheme may name. */
export type HmacAlgorithm = 'sha1' | 'sha256' | 'sha512';

/**
 * HMAC of the concatenation of `parts`. Strings are UTF-8, buffers are taken byte for byte.
 * @example hmacDigest('sha256', key, [`${t}.`, rawBody])
 */
export function hmacDigest(algorithm: HmacAlgorithm, key: string | Uint8Array, parts: readonly (string | Uint8Array)[]): Buffer {
  const hmac = createHmac(algorithm, key);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}
