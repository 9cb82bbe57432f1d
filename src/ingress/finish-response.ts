// Ends a response only once its request's body has been read. Refusing a request whose
// body is still arriving and then closing sends a TCP RST over the unread bytes, and a
// sender still writing sees EPIPE or ECONNRESET, often before it reads the answer: node's
// own http.request posting 10 MB to a 1 MiB limit failed in 10 of 10 tries. So the answer
// goes out at once, the rest of the body is read and thrown away (bounded), and only then
// does node end the response (and close, if either side asked to).

import type { ServerResponse } from 'node:http';
import { isBodyWithheld } from './continue-invite.js';

/**
 * 16 MiB discarded at most: a sender that overshoots a 1 MiB limit by a 10 MB payload
 * still finishes writing and reads its answer cleanly; past it the connection is cut.
 */
export const DISCARD_LIMIT_BYTES = 16 * 1024 * 1024;
/** 5 s at most, so a trickling sender cannot hold a refused connection open. */
export const DISCARD_TIMEOUT_MS = 5_000;

/**
 * Send `text` as the rest of the response and end it: now when the request body was read
 * to its end, else once what is left of it has been discarded. Past `DISCARD_LIMIT_BYTES`
 * or `DISCARD_TIMEOUT_MS` the connection is destroyed (the answer is already out).
 */
export function finishResponse(res: ServerResponse, text: string): void {
  const req = res.req;
  // A client refused before its 100 Continue sends no body: nothing to wait for (the
  // connection closes after this answer, continue-invite.ts). One that sent its body
  // without waiting, as it may, has it discarded like any other.
  if (req.complete || (isBodyWithheld(req) && req.readableLength === 0)) {
    res.end(text);
    return;
  }
  res.write(text);
  let discardedBytes = 0;
  const cleanup = () => {
    clearTimeout(timer);
    req.off('data', onData);
    req.off('end', onEnd);
    req.off('close', cleanup);
  };
  const onEnd = () => {
    cleanup();
    res.end();
  };
  const cut = () => {
    cleanup();
    res.destroy();
  };
  const onData = (chunk: Buffer) => {
    discardedBytes += chunk.length;
    if (discardedBytes > DISCARD_LIMIT_BYTES) cut();
  };
  const timer = setTimeout(cut, DISCARD_TIMEOUT_MS);
  timer.unref();
  req.on('data', onData);
  req.once('end', onEnd);
  req.once('close', cleanup);
  req.resume();
}
