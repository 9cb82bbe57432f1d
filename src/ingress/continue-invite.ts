// `Expect: 100-continue`: the client waits for "100 Continue" before it sends the body.
// Node answers 100 before any handler runs unless the server takes `checkContinue`; the
// server does, and the invitation goes out only when a body reader is about to read
// (readBody), after the route, the headers and the declared length have passed. A request
// refused before that never gets it, so its sender never uploads a body that is refused
// anyway; such a client sends no body at all, so the response ends at once and the
// connection closes (its framing is unknown from there).

import type { IncomingMessage, ServerResponse } from 'node:http';

/** Responses whose request asked for 100-continue and has not been invited yet, with whether they would have kept the connection. */
const uninvited = new WeakMap<IncomingMessage, { readonly res: ServerResponse; readonly keepAlive: boolean }>();

/** Holds a request's 100 Continue until its body is read; until then its response closes the connection. */
export function holdContinue(req: IncomingMessage, res: ServerResponse): void {
  uninvited.set(req, { res, keepAlive: res.shouldKeepAlive });
  res.shouldKeepAlive = false;
}

/** Sends the 100 Continue the request asked for, once, if it asked and nothing was answered yet. */
export function inviteBody(req: IncomingMessage): void {
  const held = uninvited.get(req);
  if (!held) return;
  uninvited.delete(req);
  if (held.res.headersSent) return;
  held.res.shouldKeepAlive = held.keepAlive;
  held.res.writeContinue();
}

/** The request asked for 100-continue and was refused before its invitation: no body is coming. */
export function isBodyWithheld(req: IncomingMessage): boolean {
  return uninvited.has(req);
}
