// What the hooks route can refuse from a request's headers alone, before it reads (and
// holds in memory) a byte of the body: a routing header sent twice, a signature header
// missing or malformed, a signed timestamp outside the window. An unsigned flood then
// costs no body buffers at all.

import type { IncomingMessage } from 'node:http';
import { AmbiguousHeaderError } from '../core/errors.js';
import { httpErrorFromError, httpErrorFromVerifyFailure } from './http-errors.js';
import type { HttpError } from './http-errors.js';
import type { IngressSource } from './sources.js';

/** A refusal and the fields its log line carries. */
export interface HeaderRefusal {
  readonly error: HttpError;
  readonly detail: Readonly<Record<string, unknown>>;
}

/** The refusal the headers of `req` already earn for `source` at `now`, or null to read the body. */
export function checkHeaders(req: IncomingMessage, source: IngressSource, now: Date): HeaderRefusal | null {
  const repeated = findRepeatedHeader(req.rawHeaders, source.provider.routingHeaders);
  if (repeated !== null) return { error: httpErrorFromError(new AmbiguousHeaderError(repeated)), detail: { header: repeated } };
  const failure = source.provider.verifyHeaders({ headers: req.headers, now });
  if (failure !== null) return { error: httpErrorFromVerifyFailure(failure), detail: { reason: failure.reason } };
  return null;
}

/**
 * The first of `names` (lower-cased) the request carries more than once. `req.headers`
 * joins repeats into one `a, b` string (or, for a few names, keeps only the first), so
 * the names as sent are counted instead. Not `req.headersDistinct`: it builds a new object
 * of arrays for every header on each read, which cost more than the rest of this check.
 */
function findRepeatedHeader(rawHeaders: readonly string[], names: readonly string[]): string | null {
  for (const name of names) {
    let seen = 0;
    // Names and values alternate; a name is compared only when its length matches.
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const sent = rawHeaders[i]!;
      if (sent.length === name.length && (sent === name || sent.toLowerCase() === name) && ++seen > 1) return name;
    }
  }
  return null;
}
