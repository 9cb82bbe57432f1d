// Who may use the dashboard, and proof that a form was posted from it. One secret, the
// dashboard token, is the whole credential: scripts send it as a bearer token; a browser
// trades it once at /dashboard/login for a session cookie that holds a signed, expiring
// session id (never the token). Sessions are stateless (nothing kept in the process), so
// they survive a restart; changing the token ends every one of them.
//
// Every POST made with a cookie carries a CSRF token derived from the session id, checked
// in constant time. A bearer request needs none: a browser never attaches an Authorization
// header to a cross-site request on its own, so a forged form cannot carry one.

import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { InvalidArgumentError } from '../core/errors.js';
import { timingSafeEqual } from '../providers/timing-safe-equal.js';

/** The session cookie's name; its path is /dashboard, so nothing else on the server sees it. */
export const SESSION_COOKIE = 'mailroom_session';
/** A login form's one-time nonce, tying the login CSRF token to this browser. */
export const LOGIN_COOKIE = 'mailroom_login';
/** 12 hours: a working night, after which the operator logs in again. */
export const SESSION_TTL_MS = 12 * 3_600_000;
/** 10 minutes to submit the login form once it was shown. */
export const LOGIN_TTL_MS = 10 * 60_000;

/**
 * 16 characters: a token anyone chose by hand must at least not be a word. The generated
 * one is 43 (32 random bytes); `openssl rand -base64 32` gives 44.
 */
export const MIN_DASHBOARD_TOKEN_LENGTH = 16;

/** Why `token` cannot be the dashboard token, or null when it can. */
export function dashboardTokenProblem(token: string): string | null {
  return token.length < MIN_DASHBOARD_TOKEN_LENGTH
    ? `must be at least ${MIN_DASHBOARD_TOKEN_LENGTH} characters, since it is the whole credential (try: openssl rand -base64 32)`
    : null;
}

/** A request's proven identity: how it authenticated, and the session's CSRF token if by cookie. */
export type DashboardCredential =
  | { readonly kind: 'bearer' }
  | { readonly kind: 'session'; readonly sessionId: string; readonly csrfToken: string };

/**
 * Signs and checks sessions and CSRF tokens with a key derived from the dashboard token.
 * @example
 * const auth = new DashboardAuth(token);
 * const cookie = auth.newSession(Date.now());
 * auth.credentialOf(req, Date.now()); // { kind: 'session', sessionId, csrfToken } | null
 */
export class DashboardAuth {
  private readonly token: Buffer;
  /** A key of its own, so a signed value never equals anything keyed by the token itself. */
  private readonly key: Buffer;

  /** @throws InvalidArgumentError for a token too short to be the whole credential */
  constructor(token: string) {
    const problem = dashboardTokenProblem(token);
    if (problem !== null) throw new InvalidArgumentError(`The dashboard token ${problem}.`);
    this.token = Buffer.from(token, 'utf8');
    this.key = createHmac('sha256', this.token).update('mailroom dashboard session key v1').digest();
  }

  /** True when `given` is the dashboard token (constant time in the token's length). */
  isToken(given: string): boolean {
    return timingSafeEqual(Buffer.from(given, 'utf8'), this.token);
  }

  /** A new session's cookie value: `id.expiresAtMs.signature`. */
  newSession(nowMs: number): string {
    const id = randomBytes(18).toString('base64url');
    const payload = `${id}.${nowMs + SESSION_TTL_MS}`;
    return `${payload}.${this.sign(`session:${payload}`)}`;
  }

  /** The session id of a cookie value this process signed and that has not expired, else null. */
  sessionIdOf(value: string | undefined, nowMs: number): string | null {
    if (value === undefined) return null;
    const parts = value.split('.');
    if (parts.length !== 3) return null;
    const [id, expires, signature] = parts as [string, string, string];
    if (!this.verify(`session:${id}.${expires}`, signature)) return null;
    if (!/^\d{1,16}$/.test(expires) || Number(expires) <= nowMs) return null;
    return id;
  }

  /** The CSRF token every form of this session carries. */
  csrfTokenFor(sessionId: string): string {
    return this.sign(`csrf:${sessionId}`);
  }

  /** True when `given` is this session's CSRF token. */
  isCsrfToken(sessionId: string, given: string | undefined): boolean {
    return given !== undefined && this.verify(`csrf:${sessionId}`, given);
  }

  /** A login form's nonce (for its cookie) and the CSRF token the form carries with it. */
  newLogin(nowMs: number): { readonly nonce: string; readonly csrfToken: string } {
    const nonce = `${randomBytes(18).toString('base64url')}.${nowMs + LOGIN_TTL_MS}`;
    return { nonce, csrfToken: this.sign(`login:${nonce}`) };
  }

  /** True when a login form's token matches its nonce cookie, and the form is fresh. */
  isLoginCsrfToken(nonce: string | undefined, given: string | undefined, nowMs: number): boolean {
    if (nonce === undefined || given === undefined || !this.verify(`login:${nonce}`, given)) return false;
    const expires = nonce.split('.')[1] ?? '';
    return /^\d{1,16}$/.test(expires) && Number(expires) > nowMs;
  }

  /**
   * How `req` is authenticated: a bearer token, else a valid session cookie, else null.
   * A wrong bearer token is null even when a cookie is valid: a script sent it on purpose.
   */
  credentialOf(req: IncomingMessage, nowMs: number): DashboardCredential | null {
    const authorization = req.headers.authorization;
    if (authorization !== undefined) {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
      return match && this.isToken(match[1]!) ? { kind: 'bearer' } : null;
    }
    const sessionId = this.sessionIdOf(cookiesOf(req)[SESSION_COOKIE], nowMs);
    return sessionId === null ? null : { kind: 'session', sessionId, csrfToken: this.csrfTokenFor(sessionId) };
  }

  private sign(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('base64url');
  }

  private verify(text: string, signature: string): boolean {
    return timingSafeEqual(Buffer.from(signature, 'utf8'), Buffer.from(this.sign(text), 'utf8'));
  }
}

/** The request's cookies by name (first one wins; values left as sent). */
export function cookiesOf(req: IncomingMessage): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    if (!(name in cookies)) cookies[name] = part.slice(eq + 1).trim();
  }
  return cookies;
}

/** A token for `mailroom serve` to print when none is configured: 32 random bytes. */
export function generateDashboardToken(): string {
  return randomBytes(32).toString('base64url');
}
