// Reads a request body into one Buffer, refusing as soon as it passes the limit: a body
// that declares a larger Content-Length is refused before any byte is read, and a chunked
// one stops being buffered the moment it crosses the limit.

import type { IncomingMessage } from 'node:http';
import { PayloadTooLargeError } from '../core/errors.js';

/** The client went away before the body was complete: there is nobody to answer. */
export class RequestAbortedError extends Error {
  constructor() {
    super('the client closed the request before its body was complete');
    this.name = 'RequestAbortedError';
  }
}

/**
 * The whole body, byte-exact.
 * @throws PayloadTooLargeError past `limitBytes`; RequestAbortedError when the client left.
 */
export function readBody(req: IncomingMessage, limitBytes: number): Promise<Buffer> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && Number(declared) > limitBytes) return Promise.reject(new PayloadTooLargeError(limitBytes));
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.length;
      if (received > limitBytes) {
        cleanup();
        // Stop reading: the socket is closed once the 413 is written.
        req.pause();
        reject(new PayloadTooLargeError(limitBytes));
        return;
      }
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
