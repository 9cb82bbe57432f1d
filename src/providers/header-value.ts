// Reads one request header the way node:http hands them over, so every provider treats
// absent, empty and repeated headers alike.

import type { RequestHeaders } from './provider.js';

/**
 * The trimmed value of header `name`, or undefined when it is absent or empty.
 * A repeated header (node gives `string[]` only for a few names) is joined with ", ",
 * as node itself joins repeats of unknown headers; a scheme's parser then sees the
 * repeat and rejects it rather than picking one copy silently.
 */
export function readHeader(headers: RequestHeaders, name: string): string | undefined {
  const lower = name.toLowerCase();
  let value = headers[lower];
  if (value === undefined) {
    // Callers other than node:http (tests, adapters) may not lower-case names.
    for (const key of Object.keys(headers)) {
      if (key.toLowerCase() === lower) {
        value = headers[key];
        break;
      }
    }
  }
  if (value === undefined) return undefined;
  const text = (Array.isArray(value) ? value.join(', ') : String(value)).trim();
  return text === '' ? undefined : text;
}
