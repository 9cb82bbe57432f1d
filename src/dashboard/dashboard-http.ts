// How the dashboard writes answers: server-rendered HTML with headers that keep the page
// to its own origin (no inline script, no framing, no referrer leaks), redirects, and form
// bodies read within a small bound. Errors are mapped by ingress/http-errors.ts like every
// other answer of the server; this only chooses whether a person or a script reads them.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { VNode } from 'preact';
import { renderToString } from 'preact-render-to-string';
import { terminalText } from '../core/display-text.js';
import { CsrfError, MailroomError } from '../core/errors.js';
import { httpErrorFromError, sendHttpError } from '../ingress/http-errors.js';
import type { HttpError } from '../ingress/http-errors.js';
import type { Logger } from '../log.js';
import { BodyBudget } from '../ingress/body-budget.js';
import { finishResponse } from '../ingress/finish-response.js';
import { readBody } from '../ingress/read-body.js';

/**
 * Scripts and styles from this origin only, no inline script, forms posting back here
 * only, never inside a frame: a value that slipped through escaping still could not run.
 */
const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
};

/** 64 KiB of form: a reason and a few filters, never more. */
const FORM_LIMIT_BYTES = 64 * 1024;
/** Forms being read at once share 1 MiB, apart from the webhooks' budget. */
const formBudget = new BodyBudget(1024 * 1024);

/** True when the client reads HTML (a browser), so errors become pages and 401 a redirect to login. */
export function wantsHtml(req: IncomingMessage): boolean {
  return /\btext\/html\b/i.test(req.headers.accept ?? '');
}

/**
 * Render `view` and send it. A whole page gets its doctype; a fragment (a refreshed panel)
 * is sent as rendered. `startedAt` (performance.now()) becomes a Server-Timing header, the
 * figure scripts/dashboard-timing.ts reads.
 */
export function sendView(
  res: ServerResponse,
  status: number,
  view: VNode,
  options: { readonly fragment?: boolean; readonly startedAt?: number; readonly headers?: Readonly<Record<string, string>> } = {},
): void {
  const html = `${options.fragment ? '' : '<!DOCTYPE html>'}${controlsWrittenOutInText(renderToString(view))}`;
  const timing = options.startedAt === undefined ? {} : { 'server-timing': `app;dur=${(performance.now() - options.startedAt).toFixed(1)}` };
  res.writeHead(status, { ...PAGE_HEADERS, 'content-length': Buffer.byteLength(html), ...timing, ...options.headers });
  finishResponse(res, html);
}

/**
 * Controls in stored text (an ESC sequence in a receiver's answer or a handler's error)
 * written out as the CLI writes them (`\u001b`) in the page's text: escaped HTML still
 * carries them as raw bytes, shown as boxes and stray `[31m`, and bidi overrides reorder
 * what is read. Inside tags nothing changes: a form field's value (a queue to resume, a
 * filter to replay) must post back the text as stored. The renderer escapes `<` in text
 * and `"` in attribute values, so a `<` starts a tag and a `"` inside one a value.
 */
export function controlsWrittenOutInText(html: string): string {
  let out = '';
  let at = 0;
  while (at < html.length) {
    const tagStart = html.indexOf('<', at);
    if (tagStart === -1) return out + terminalText(html.slice(at));
    out += terminalText(html.slice(at, tagStart));
    let cursor = tagStart + 1;
    for (;;) {
      const close = html.indexOf('>', cursor);
      const quote = html.indexOf('"', cursor);
      if (close === -1) return out + html.slice(tagStart);
      if (quote === -1 || close < quote) {
        cursor = close + 1;
        break;
      }
      const quoteEnd = html.indexOf('"', quote + 1);
      if (quoteEnd === -1) return out + html.slice(tagStart);
      cursor = quoteEnd + 1;
    }
    out += html.slice(tagStart, cursor);
    at = cursor;
  }
  return out;
}

/** 303 See Other to `location` (a path on this server), with any cookies to set. */
export function redirect(res: ServerResponse, location: string, cookies: readonly string[] = []): void {
  res.writeHead(303, { location, 'cache-control': 'no-store', 'content-length': 0, ...(cookies.length > 0 ? { 'set-cookie': [...cookies] } : {}) });
  finishResponse(res, '');
}

/** A posted form (application/x-www-form-urlencoded), read within 64 KiB. */
export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const reservation = formBudget.reserve();
  try {
    const body = await readBody(req, { limitBytes: FORM_LIMIT_BYTES, budget: formBudget, reservation });
    return new URLSearchParams(body.toString('utf8'));
  } finally {
    reservation.release();
  }
}

/**
 * A Set-Cookie value: HttpOnly, SameSite (Strict unless told), Secure when the connection is
 * TLS. The portal takes Lax: its link is opened from another site (an email, the app), and
 * Chromium withholds Strict cookies along a redirect chain a cross-site click started.
 */
export function cookie(
  req: IncomingMessage,
  name: string,
  value: string,
  options: { readonly path: string; readonly maxAgeSeconds: number; readonly sameSite?: 'Strict' | 'Lax' },
): string {
  const secure = (req.socket as { encrypted?: boolean }).encrypted ? '; Secure' : '';
  return `${name}=${value}; Path=${options.path}; Max-Age=${options.maxAgeSeconds}; HttpOnly; SameSite=${options.sameSite ?? 'Strict'}${secure}`;
}

/**
 * Refuse a form another site's page posted: browsers say where a request came from
 * (Sec-Fetch-Site, Origin), so it is refused before its CSRF token is even read.
 * @throws CsrfError
 */
export function assertSameOrigin(req: IncomingMessage): void {
  const site = req.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') throw new CsrfError('The form was posted from another site.');
  const origin = req.headers.origin;
  if (origin !== undefined && hostOf(origin) !== req.headers.host) throw new CsrfError('The form was posted from another origin.');
}

function hostOf(origin: string): string | null {
  try {
    return new URL(origin).host;
  } catch {
    return null;
  }
}

/**
 * A request's path as a log line may carry it: no query, and no portal link's token (the
 * path of /portal/enter/<token> is itself the credential).
 */
export function pathForLog(url: string | undefined): string {
  return (url ?? '/').split('?')[0]!.slice(0, 500).replace(/^(\/portal\/enter\/)[^/]*/, '$1[redacted]');
}

/**
 * Answer a failed request: a page from `page` for a browser, the server's JSON error for a
 * script. An error that is not one of ours is logged (by path only: never a query that may
 * carry a filter or a token); a response already under way is cut off.
 */
export function sendError(req: IncomingMessage, res: ServerResponse, error: unknown, log: Logger, page: (answer: HttpError) => VNode): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (!(error instanceof MailroomError)) log.error({ err: error, path: pathForLog(req.url) }, 'dashboard request failed');
  const answer = httpErrorFromError(error);
  if (!wantsHtml(req)) {
    sendHttpError(res, answer);
    return;
  }
  sendView(res, answer.status, page(answer), { headers: answer.headers });
}
