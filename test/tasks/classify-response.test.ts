import { describe, expect, it } from 'vitest';
import { classifyResponse, MAX_RETRY_AFTER_MS, parseRetryAfterMs } from '../../src/tasks/classify-response.js';

const NOW = new Date('2025-06-01T12:00:00Z');

describe('classifyResponse', () => {
  it('reads Retry-After as seconds or an HTTP date, capped at a day', () => {
    expect(parseRetryAfterMs('30', NOW)).toBe(30_000);
    expect(parseRetryAfterMs('Sun, 01 Jun 2025 12:01:00 GMT', NOW)).toBe(60_000);
    expect(parseRetryAfterMs('Sun, 01 Jun 2025 11:00:00 GMT', NOW)).toBe(0);
    expect(parseRetryAfterMs('9999999', NOW)).toBe(MAX_RETRY_AFTER_MS);
    expect(parseRetryAfterMs('soon', NOW)).toBeNull();
    expect(parseRetryAfterMs(null, NOW)).toBeNull();
  });

  it('treats a redirect as permanent, since a POST is not followed', () => {
    expect(classifyResponse(301, null)).toEqual({ kind: 'permanent' });
  });

  it('honours Retry-After on 429 and 503 only', () => {
    expect(classifyResponse(429, '5', NOW)).toEqual({ kind: 'transient', retryAfterMs: 5_000 });
    expect(classifyResponse(503, '5', NOW)).toEqual({ kind: 'transient', retryAfterMs: 5_000 });
    expect(classifyResponse(502, '5', NOW)).toEqual({ kind: 'transient', retryAfterMs: null });
    expect(classifyResponse(408, '5', NOW)).toEqual({ kind: 'transient', retryAfterMs: null });
  });
});
