// How an HTTP answer from a webhook receiver decides a job's fate, shared by `forward`
// (and the outgoing `deliver` task): 2xx done; 4xx permanent except the ones that mean
// "try again" (408, 409, 425, 429); 5xx transient; Retry-After honoured on 429 and 503.

/** What to do with a job after its HTTP attempt answered. */
export type ResponseClass =
  | { readonly kind: 'done' }
  | { readonly kind: 'permanent' }
  /** Retry; `retryAfterMs` is the receiver's Retry-After when it sent one we honour. */
  | { readonly kind: 'transient'; readonly retryAfterMs: number | null };

/** 4xx answers that describe a passing condition rather than a bad request. */
const RETRYABLE_CLIENT_ERRORS: ReadonlySet<number> = new Set([408, 409, 425, 429]);
/** Statuses whose Retry-After we obey (RFC 9110 defines it for 503 and 3xx; RFC 6585 for 429). */
const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([429, 503]);
/** A receiver cannot park a job for longer than a day with one header. */
export const MAX_RETRY_AFTER_MS = 24 * 3_600_000;

/** A 2xx: the receiver has the request, whatever its body says (or fails to finish saying). */
export function isSuccessStatus(status: number): boolean {
  return status >= 200 && status < 300;
}

/**
 * Classify a response by status and its Retry-After header.
 * 3xx is permanent: redirects are not followed for a POST, so the URL in config is wrong.
 * @example classifyResponse(429, '30') // { kind: 'transient', retryAfterMs: 30000 }
 */
export function classifyResponse(status: number, retryAfter: string | null | undefined, now: Date = new Date()): ResponseClass {
  if (isSuccessStatus(status)) return { kind: 'done' };
  if (status >= 400 && status < 500 && !RETRYABLE_CLIENT_ERRORS.has(status)) return { kind: 'permanent' };
  if (status >= 300 && status < 400) return { kind: 'permanent' };
  const retryAfterMs = RETRY_AFTER_STATUSES.has(status) ? parseRetryAfterMs(retryAfter, now) : null;
  return { kind: 'transient', retryAfterMs };
}

/**
 * Retry-After as ms from `now`: delay-seconds (`120`) or an HTTP date; null when absent or
 * unreadable; capped at MAX_RETRY_AFTER_MS.
 */
export function parseRetryAfterMs(value: string | null | undefined, now: Date = new Date()): number | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  if (text === '') return null;
  let ms: number;
  if (/^\d+$/.test(text)) {
    ms = Number(text) * 1_000;
  } else {
    const at = Date.parse(text);
    if (Number.isNaN(at)) return null;
    ms = at - now.getTime();
  }
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms));
}
