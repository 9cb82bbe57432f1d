// The delivery id and event type an inbound event may carry, the same on every store.
// PostgreSQL cannot keep a NUL in text and refuses a unique-index entry over 2,704 bytes,
// where SQLite keeps both: checked here, a bad value is a 400 on both, never a 503 that
// a provider's retry can never fix.

import { EventIdentityInvalidError } from './errors.js';

/**
 * 256 bytes of UTF-8 for a delivery id or an event type. The providers' own are far
 * shorter (GitHub and Shopify ids are 36-character UUIDs, Stripe's `evt_…` about 30, the
 * longest Shopify topic 44), and 256 keeps the dedupe index entry well under PostgreSQL's
 * 2,704-byte limit.
 */
export const MAX_EVENT_IDENTITY_BYTES = 256;

// Control characters (NUL, line breaks, escapes) and lone UTF-16 surrogates: PostgreSQL
// refuses NUL; the rest would forge lines in logs and the CLI, or be silently re-encoded.
const UNSTORABLE_CHARACTER = /[\p{Cc}\p{Cs}]/u;

/**
 * Check an event's delivery id and type against the limits.
 * @throws EventIdentityInvalidError naming the field and the problem (never the value).
 */
export function checkEventIdentity(event: { readonly deliveryId: string | null; readonly type: string | null }): void {
  for (const field of ['deliveryId', 'type'] as const) {
    const value = event[field];
    if (value === null) continue;
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > MAX_EVENT_IDENTITY_BYTES) {
      throw new EventIdentityInvalidError(field, `is ${bytes} bytes of UTF-8; the limit is ${MAX_EVENT_IDENTITY_BYTES}`);
    }
    if (UNSTORABLE_CHARACTER.test(value)) throw new EventIdentityInvalidError(field, 'holds a control character or a lone surrogate');
  }
}
