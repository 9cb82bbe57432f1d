// Shared fixtures and assertions for the provider tests: a pinned clock, awkward bodies,
// and a failure check that also proves the message leaks no secret or signature.

import { expect } from 'vitest';
import type { VerifyFailureReason, VerifyResult, VerifySuccess } from '../../src/providers/provider.js';

/** The instant every verification is judged at, unless a test needs the real clock. */
export const NOW = new Date('2025-06-01T12:00:00.000Z');
export const NOW_SECONDS = Math.floor(NOW.getTime() / 1000);

/** Bytes that are not valid UTF-8: decoding them to a string first would change them. */
export const NON_UTF8_BODY = Buffer.from([0x7b, 0xff, 0xfe, 0x00, 0x80, 0xc3, 0x28, 0x7d]);

/** A copy of `body` with one byte changed. */
export function tamperOneByte(body: Buffer, index = Math.floor(body.length / 2)): Buffer {
  const copy = Buffer.from(body);
  copy[index] = copy[index]! ^ 0x01;
  return copy;
}

/** A JSON body as the exact bytes a sender would put on the wire. */
export function jsonBody(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), 'utf8');
}

/** Assert success and narrow. */
export function expectOk(result: VerifyResult): VerifySuccess {
  if (!result.ok) throw new Error(`expected ok, got ${result.reason}: ${result.message}`);
  return result;
}

/**
 * Assert a failure with `reason` whose message mentions none of `secretTexts` (secrets and
 * signature header values), since messages reach logs and HTTP responses.
 */
export function expectFailure(result: VerifyResult, reason: VerifyFailureReason, secretTexts: readonly string[] = []): void {
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.reason).toBe(reason);
  expect(result.message.length).toBeGreaterThan(0);
  for (const text of secretTexts) {
    if (text.length >= 6) expect(result.message).not.toContain(text);
  }
}
