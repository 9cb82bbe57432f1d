// Reads a request body into one Buffer, refusing as soon as it passes the limit or the
// shared memory budget: a body that declares a larger Content-Length than its limit, or
// than the budget has free, is refused before any byte is read; every body, declared or
// chunked, is charged to the budget as its bytes arrive and stops being buffered the moment
// it crosses either bound. Charging a declared length up front let requests that passed the
// header checks (which need no secret) and then sent nothing hold the whole budget: 64
// sockets declaring 1 MiB each refused every signed webhook with 503, at no cost to them.

import type { IncomingMessage } from 'node:http';
import { IngressBusyError, PayloadTooLargeError } from '../core/errors.js';
import type { BodyBudget, BodyReservation } from './body-budget.js';
import { inviteBody } from './continue-invite.js';

/**
 * 5 s: bodies ahead in the budget finish within a request timeout or are cut; a retry a
 * few seconds later finds room, and every provider's own schedule waits longer anyway.
 */
const BUSY_RETRY_AFTER_MS = 5_000;

/** The client went away before the body was complete: there is nobody to answer. */
export class RequestAbortedError extends Error {
  constructor() {
    super('the client closed the request before its body was complete');
    this.name = 'RequestAbortedError';
  }
}

/** Where a body may go: its own limit, and the budget (through a reservation) it shares. */
export interface ReadBodyLimits {
  readonly limitBytes: number;
  readonly budget: BodyBudget;
  /** Holds what was read; the caller releases it once done with the body. */
  readonly reservation: BodyReservation;
}

/**
 * The whole body, byte-exact.
 * @throws PayloadTooLargeError past `limitBytes`; IngressBusyError when the budget cannot
 *   hold it; RequestAbortedError when the client left.
 */
export function readBody(req: IncomingMessage, { limitBytes, budget, reservation }: ReadBodyLimits): Promise<Buffer> {
  const declaredText = req.headers['content-length'];
  const declared = declaredText === undefined ? null : Number(declaredText);
  if (declared !== null && declared > limitBytes) return Promise.reject(new PayloadTooLargeError(limitBytes));
  if (declared !== null && !budget.fits(declared)) return Promise.reject(busyError(budget));
  // Everything known before the body passed: a client waiting for 100 Continue may send it.
  inviteBody(req);
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const stop = (error: Error) => {
      cleanup();
      // Stop reading: what is left is discarded once the refusal is written.
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limitBytes) return stop(new PayloadTooLargeError(limitBytes));
      if (!reservation.take(chunk.length)) return stop(busyError(budget));
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, received));
    };
    const onError = () => {
      cleanup();
      reject(new RequestAbortedError());
    };
    const onClose = () => {
      if (!req.complete) {
        cleanup();
        reject(new RequestAbortedError());
      }
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}

function busyError(budget: BodyBudget): IngressBusyError {
  return new IngressBusyError(budget.limitBytes, BUSY_RETRY_AFTER_MS);
}
