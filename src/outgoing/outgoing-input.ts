// Checks of what users pass to the outgoing-webhook API (mr.endpoints.*, mr.publish), so bad
// input is a clear InvalidArgumentError (or UrlBlockedError) before anything is stored.

import { InvalidArgumentError } from '../core/errors.js';
import type { EndpointRateLimit } from '../core/outgoing-types.js';
import type { SsrfGuard } from '../tasks/deliver/ssrf-guard.js';

export function checkText(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new InvalidArgumentError(`${name} must be a non-empty string`);
  if (value.includes('\u0000')) throw new InvalidArgumentError(`${name} must not contain a NUL character`);
  return value;
}

/**
 * An endpoint URL: http(s), no credentials in it (they would show in every listing), and
 * a host the SSRF guard lets through.
 * @throws InvalidArgumentError, UrlBlockedError
 */
export async function checkEndpointUrl(value: unknown, guard: SsrfGuard): Promise<string> {
  const text = checkText(value, 'url');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new InvalidArgumentError('url must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new InvalidArgumentError('url must use http or https');
  if (url.username !== '' || url.password !== '') {
    throw new InvalidArgumentError('url must not carry credentials (user:password@); receivers verify the signature instead');
  }
  await guard.checkUrl(url);
  return url.toString();
}

export function checkEventTypes(value: unknown): string[] | null {
  if (value === undefined || value === null) return null;
  if (!Array.isArray(value) || value.length === 0) throw new InvalidArgumentError('eventTypes must be a non-empty list of event types (omit it for every type)');
  return value.map((type, index) => {
    const text = checkText(type, `eventTypes[${index}]`);
    // Types are matched exactly: a '*' would be a type no message has, and the endpoint would get nothing.
    if (text === '*') throw new InvalidArgumentError('eventTypes lists exact event types, and "*" is none of them: omit eventTypes (null on update) for every type');
    // Nor a pattern: "invoice.*" would match no message either.
    if (text.includes('*')) throw new InvalidArgumentError(`eventTypes lists exact event types, not patterns: "${text}" matches no message; list each type`);
    return text;
  });
}

export function checkRateLimit(value: unknown): EndpointRateLimit | null {
  if (value === undefined || value === null) return null;
  const rate = value as Partial<EndpointRateLimit>;
  if (typeof value !== 'object' || !isPositiveInteger(rate.limit) || !isPositiveInteger(rate.intervalMs)) {
    throw new InvalidArgumentError('rateLimit must be { limit, intervalMs } with whole numbers >= 1');
  }
  return { limit: rate.limit!, intervalMs: rate.intervalMs! };
}

export function checkMetadata(value: unknown): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value)) throw new InvalidArgumentError('metadata must be a plain object');
  return value as Record<string, unknown>;
}

export function checkOptionalText(value: unknown, name: string): string | null {
  return value === undefined || value === null ? null : checkText(value, name);
}

/** JSON of a payload, or InvalidArgumentError naming what could not be serialised. */
export function payloadJsonOf(payload: unknown, what: string): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(payload === undefined ? null : payload);
  } catch (cause) {
    throw new InvalidArgumentError(`${what} is not JSON-serialisable: ${(cause as Error).message}`);
  }
  if (json === undefined) throw new InvalidArgumentError(`${what} is not JSON-serialisable`);
  return json;
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1;
}
