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
  // Providers ask with lower-case constants and node:http keys are lower-case: look the
  // name up as given first, and lower-case only on a miss (a lookup that runs for every
  // header of every request).
  let value = headers[name];
  if (value === undefined) {
    const lower = name.toLowerCase();
    value = headers[lower];
    // Callers other than node:http (tests, adapters) may not lower-case names.
    if (value === undefined) {
      for (const key of Object.keys(headers)) {
        if (key.toLowerCase() === lower) {
          value = headers[key];
          break;
        }
      }
    }
  }
  if (value === undefined) return undefined;
  const text = (Array.isArray(value) ? value.join(', ') : String(value)).trim();
  return text === '' ? undefined : text;
}
