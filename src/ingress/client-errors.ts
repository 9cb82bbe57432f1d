// Answers what node's HTTP parser refuses before or while a route reads a request: a
// header or body timeout (408), headers too large (431), bytes that are not HTTP (400), in
// the usual JSON error shape. Logs node's error code only: the error also carries
// `rawPacket`, the raw request with its Authorization and signature headers.

import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../log.js';
import { DISCARD_TIMEOUT_MS } from './finish-response.js';
import { httpErrorFromClientError, rawHttpError, sendHttpErrorAndClose } from './http-errors.js';

/**
 * Answer a `clientError` on `socket`. `current` is the response of the last request the
 * socket carried, if any: a request still mid-body is answered through it (and its body
 * cut off); otherwise the answer is written on the socket as raw bytes.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket, current: ServerResponse | undefined, log: Logger): void {
  const answer = httpErrorFromClientError(error);
  if (answer === null) log.debug({ reason: error.code ?? null }, 'connection dropped by the client mid-request');
  else log.info({ status: answer.status, code: answer.code, reason: error.code ?? null }, 'malformed HTTP request refused');
  if (current !== undefined && !current.req.complete) {
    if (answer !== null && !current.headersSent) sendHttpErrorAndClose(current, answer);
    else socket.destroy();
    return;
  }
  // node reports a parse error again for bytes that keep arriving after the answer.
  if (!socket.writable) return;
  if (answer === null) {
    socket.destroy();
    return;
  }
  // end() rather than destroy(): closing over unread bytes sends a reset, which can cost
  // the sender its answer. The linger bounds a sender that never closes its side.
  socket.end(rawHttpError(answer));
  setTimeout(() => socket.destroy(), DISCARD_TIMEOUT_MS).unref();
}
