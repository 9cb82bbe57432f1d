// The one mapping from typed errors, verification reasons and node's HTTP parser errors
// to an HTTP status and the JSON body `{ "error": { "code", "message" } }`, and the ways
// to write it. Messages come from errors and providers that never include secrets or
// signatures; unexpected errors get a generic message.

import { STATUS_CODES } from 'node:http';
import type { ServerResponse } from 'node:http';
import { hasCode, IngressBusyError, LoginThrottledError, MailroomError, MethodNotAllowedError, StoreUnavailableError } from '../core/errors.js';
import type { ErrorCode } from '../core/errors.js';
import type { VerifyFailure, VerifyFailureReason } from '../providers/provider.js';
import { finishResponse } from './finish-response.js';

/** An answer to refuse a request with. */
export interface HttpError {
  readonly status: number;
  readonly code: ErrorCode;
  readonly message: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Every verification failure is a 401 except a source without a usable secret (our fault). */
const VERIFY_STATUS: Record<VerifyFailureReason, number> = {
  missing_header: 401,
  malformed_header: 401,
  bad_signature: 401,
  stale_timestamp: 401,
  future_timestamp: 401,
  missing_secret: 500,
};

/** The answer to a request whose signature did not verify. */
export function httpErrorFromVerifyFailure(failure: VerifyFailure): HttpError {
  const status = VERIFY_STATUS[failure.reason];
  return {
    status,
    code: status === 500 ? 'MR_ERR_CONFIG_INVALID' : 'MR_ERR_SIGNATURE_INVALID',
    message: status === 500 ? 'The source has no usable secret configured.' : `${failure.reason}: ${failure.message}`,
  };
}

/**
 * The answer for anything thrown while handling a request. A store that cannot commit —
 * or any failure we did not anticipate on the way to committing — is a 503 with
 * Retry-After: the event was not acknowledged, so the sender must retry (SPEC §1.1).
 */
export function httpErrorFromError(error: unknown): HttpError {
  if (error instanceof StoreUnavailableError || hasCode(error, 'MR_ERR_STORE_UNAVAILABLE')) {
    const retryAfterMs = (error as StoreUnavailableError).retryAfterMs ?? 1_000;
    return {
      status: 503,
      code: 'MR_ERR_STORE_UNAVAILABLE',
      message: 'The store is busy or unavailable; nothing was stored. Retry later.',
      headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterMs / 1_000))) },
    };
  }
  if (error instanceof IngressBusyError) {
    const retryAfterSeconds = Math.max(1, Math.ceil(error.retryAfterMs / 1_000));
    return { status: 503, code: error.code, message: error.message, headers: { 'retry-after': String(retryAfterSeconds) } };
  }
  if (error instanceof MethodNotAllowedError) {
    return { status: 405, code: error.code, message: error.message, headers: { allow: error.allowed.join(', ') } };
  }
  if (error instanceof LoginThrottledError) {
    return { status: 429, code: error.code, message: error.message, headers: { 'retry-after': String(Math.max(1, Math.ceil(error.retryAfterMs / 1_000))) } };
  }
  if (error instanceof MailroomError && error.httpStatus !== undefined && error.httpStatus < 500) {
    return { status: error.httpStatus, code: error.code, message: error.message };
  }
  return {
    status: 503,
    code: 'MR_ERR_STORE_UNAVAILABLE',
    message: 'The event could not be stored; nothing was acknowledged. Retry later.',
    headers: { 'retry-after': '1' },
  };
}

/** An HTTP/1.1 request without a Host header, which node's parser lets through when asked to. */
export const MISSING_HOST: HttpError = { status: 400, code: 'MR_ERR_REQUEST_MALFORMED', message: 'An HTTP/1.1 request needs a Host header.' };

/**
 * What node's HTTP parser refused, before any route saw a request, or null when nobody is
 * left to answer (the connection broke). `error.code` is node's (`HPE_*`, a timeout).
 */
export function httpErrorFromClientError(error: { readonly code?: string }): HttpError | null {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, code: 'MR_ERR_REQUEST_TIMEOUT', message: 'The request headers or body did not arrive in time.' };
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'MR_ERR_HEADERS_TOO_LARGE', message: 'The request headers are larger than the server accepts.' };
    case 'ECONNRESET':
    case 'EPIPE':
    // The client closed its side mid-request: an abort, not something to answer.
    case 'HPE_INVALID_EOF_STATE':
      return null;
    default:
      return { status: 400, code: 'MR_ERR_REQUEST_MALFORMED', message: 'The request is not valid HTTP.' };
  }
}

/** Write `error` as the response (JSON body, its extra headers). */
export function sendHttpError(res: ServerResponse, error: HttpError, extraHeaders: Readonly<Record<string, string>> = {}): void {
  sendJson(res, error.status, errorBody(error), { ...error.headers, ...extraHeaders });
}

/**
 * Write `error` and close the connection, reading nothing more of the request: for one
 * the server gives up on mid-body (a timeout, a body that does not parse). The request is
 * paused first, so its body cannot complete (and be stored) behind the answer, and
 * destroyed once the connection is gone: node forgets a request whose response has
 * finished, so nothing else would tell its reader that the body will never end.
 */
export function sendHttpErrorAndClose(res: ServerResponse, error: HttpError): void {
  const req = res.req;
  req.pause();
  res.socket?.once('close', () => req.destroy());
  const text = JSON.stringify(errorBody(error));
  res.writeHead(error.status, jsonHeaders(text, { ...error.headers, connection: 'close' }));
  res.end(text);
}

/** `error` as the bytes of a whole HTTP/1.1 answer, for a connection with no response object. */
export function rawHttpError(error: HttpError): string {
  const text = JSON.stringify(errorBody(error));
  const head = Object.entries(jsonHeaders(text, { ...error.headers, connection: 'close' })).map(([name, value]) => `${name}: ${value}\r\n`);
  return `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? ''}\r\n${head.join('')}\r\n${text}`;
}

/** Write a JSON response; it ends once the request's body is read (see finish-response.ts). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Readonly<Record<string, string>> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, jsonHeaders(text, headers));
  finishResponse(res, text);
}

function errorBody(error: HttpError): { error: { code: ErrorCode; message: string } } {
  return { error: { code: error.code, message: error.message } };
}

function jsonHeaders(text: string, headers: Readonly<Record<string, string>>): Record<string, string | number> {
  return {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...headers,
  };
}
