// What the dashboard hides inside payloads, results and details: the configured paths
// (`dashboard.redactPaths`, dot paths such as `card.number`) and, at any depth, keys whose
// name says they hold a secret (core/secret-names.ts, the rule headers follow too).
// A copy is redacted; stored values are never changed.

import { renderBody } from '../core/display-text.js';
import { isSecretName } from '../core/secret-names.js';

/** Shown in place of a hidden value. */
export const REDACTED = '[redacted]';

/**
 * `value` with every configured path and every secret-named key replaced by `[redacted]`.
 * @example redactJson({ card: { number: '4242' } }, ['card.number']) // { card: { number: '[redacted]' } }
 */
export function redactJson(value: unknown, paths: readonly string[] = []): unknown {
  const split = paths.map((path) => path.split('.').filter((part) => part !== ''));
  return walk(value, split);
}

function walk(value: unknown, paths: readonly string[][]): unknown {
  if (Array.isArray(value)) return value.map((item) => walk(item, paths));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value as Record<string, unknown>)) {
    const here = paths.filter((path) => path[0] === key || path[0] === '*');
    if (isSecretName(key) || here.some((path) => path.length === 1)) out[key] = REDACTED;
    else out[key] = walk(inner, here.map((path) => path.slice(1)));
  }
  return out;
}

/**
 * An inbound event's body as the page shows it: a JSON body pretty-printed with the same
 * paths and keys hidden as a job's payload (the job page shows that body redacted, so the
 * event page must too); any other body as text.
 */
export function redactedBodyText(rawBody: Buffer, paths: readonly string[] = []): string {
  // renderBody decodes as every other display does (BOM stripped, bad UTF-8 refused), so a
  // body it shows as JSON is always the one redacted here.
  return renderBody(rawBody, (parsed) => redactJson(parsed, paths));
}
