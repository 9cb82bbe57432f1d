// What a handler hands back to be stored (its return value as the job's `result`, and
// `ctx.setDetails()`), as JSON text within a byte cap, or a clear error saying why not.

import { ResultUnstorableError } from './errors.js';

/** Details are facts about an attempt (a status, an id, an excerpt), not documents. */
export const MAX_DETAILS_BYTES = 8 * 1024;

/**
 * `value` as JSON text of at most `maxBytes` UTF-8 bytes; null for undefined (and for what
 * JSON.stringify drops, like a function). Throws ResultUnstorableError for a value that is
 * not JSON (a BigInt, a cycle) or is larger than the cap.
 * @example boundedJson({ messageId: 'm-1' }, 65_536, 'result') // '{"messageId":"m-1"}'
 */
export function boundedJson(value: unknown, maxBytes: number, what: string): string | null {
  if (value === undefined) return null;
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch (error) {
    throw new ResultUnstorableError(`${what} is not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (json === undefined) return null;
  // A UTF-16 code unit is at most 3 bytes of UTF-8: short text needs no byte count.
  if (json.length * 3 > maxBytes) {
    const bytes = Buffer.byteLength(json);
    if (bytes > maxBytes) throw new ResultUnstorableError(`${what} is ${bytes} bytes of JSON; the cap is ${maxBytes}`);
  }
  return json;
}
