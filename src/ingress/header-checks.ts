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
  const repeated = findRepeatedHeader(req, source.provider.routingHeaders);
  if (repeated !== null) return { error: httpErrorFromError(new AmbiguousHeaderError(repeated)), detail: { header: repeated } };
  const failure = source.provider.verifyHeaders({ headers: req.headers, now });
  if (failure !== null) return { error: httpErrorFromVerifyFailure(failure), detail: { reason: failure.reason } };
  return null;
}

/**
 * The first of `names` the request carries more than once. `req.headers` joins repeats
 * into one `a, b` string, so the distinct values are read instead.
 */
function findRepeatedHeader(req: IncomingMessage, names: readonly string[]): string | null {
  for (const name of names) {
    if ((req.headersDistinct[name]?.length ?? 0) > 1) return name;
  }
  return null;
}
