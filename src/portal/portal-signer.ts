// Signed tenant portal links and the portal sessions they open. A link carries a tenant and
// an expiry, signed with a key derived from the portal secret; nothing is stored, so links
// and sessions survive a restart and hold across processes that share the secret (the app
// that makes links, `mailroom serve` that answers them). Changing the secret ends them all.
//
// Links, sessions and CSRF tokens are signed under different labels, so one can never be
// passed off as another, and never under the secret itself.

import { createHmac, randomBytes } from 'node:crypto';
import { timingSafeEqual } from '../providers/timing-safe-equal.js';

/** Who a verified link or session belongs to, and until when. */
export interface PortalGrant {
  readonly tenant: string;
  readonly expiresAtMs: number;
}

/** A verified portal session: its grant, and the CSRF token its forms carry. */
export interface PortalSession extends PortalGrant {
  readonly sessionId: string;
  readonly csrfToken: string;
}

/** A tenant id travels base64url-encoded, so any string (dots, spaces) fits the dotted format. */
const EXPIRY = /^\d{1,16}$/;

/**
 * Signs and checks portal links (`tenant.expiry.signature`) and session cookies.
 * @example
 * const signer = new PortalSigner(secret);
 * const token = signer.linkToken('acme', Date.now() + 3_600_000);
 * signer.verifyLink(token, Date.now()); // { tenant: 'acme', expiresAtMs }
 */
export class PortalSigner {
  private readonly key: Buffer;

  constructor(secret: string) {
    this.key = createHmac('sha256', Buffer.from(secret, 'utf8')).update('mailroom tenant portal key v1').digest();
  }

  /** The token of a link for `tenant`, valid until `expiresAtMs`. */
  linkToken(tenant: string, expiresAtMs: number): string {
    const payload = `${Buffer.from(tenant, 'utf8').toString('base64url')}.${expiresAtMs}`;
    return `${payload}.${this.sign(`link:${payload}`)}`;
  }

  /** The grant of a link token this key signed and that has not expired, else null (never says which). */
  verifyLink(token: string | undefined, nowMs: number): PortalGrant | null {
    return this.verifyDotted(token, 'link', 2, nowMs);
  }

  /** A new session's cookie value for a verified grant; it ends when the link does. */
  newSession(grant: PortalGrant): string {
    const payload = `${Buffer.from(grant.tenant, 'utf8').toString('base64url')}.${grant.expiresAtMs}.${randomBytes(18).toString('base64url')}`;
    return `${payload}.${this.sign(`session:${payload}`)}`;
  }

  /** The session of a cookie value this key signed and that has not expired, else null. */
  sessionOf(value: string | undefined, nowMs: number): PortalSession | null {
    const grant = this.verifyDotted(value, 'session', 3, nowMs);
    if (grant === null) return null;
    const sessionId = value!.split('.')[2]!;
    return { ...grant, sessionId, csrfToken: this.csrfTokenFor(sessionId) };
  }

  /** True when `given` is the CSRF token of `session`. */
  isCsrfToken(session: PortalSession, given: string | undefined): boolean {
    return given !== undefined && timingSafeEqual(Buffer.from(given, 'utf8'), Buffer.from(session.csrfToken, 'utf8'));
  }

  private csrfTokenFor(sessionId: string): string {
    return this.sign(`csrf:${sessionId}`);
  }

  /** `tenant.expiry[.id].signature` checked under `label`: signature first, then expiry. */
  private verifyDotted(value: string | undefined, label: string, fields: number, nowMs: number): PortalGrant | null {
    if (value === undefined || value.length > 4_096) return null;
    const parts = value.split('.');
    if (parts.length !== fields + 1) return null;
    const signature = parts.pop()!;
    const payload = parts.join('.');
    if (!timingSafeEqual(Buffer.from(signature, 'utf8'), Buffer.from(this.sign(`${label}:${payload}`), 'utf8'))) return null;
    const [tenant, expires] = parts as [string, string];
    if (!EXPIRY.test(expires) || Number(expires) <= nowMs) return null;
    return { tenant: Buffer.from(tenant, 'base64url').toString('utf8'), expiresAtMs: Number(expires) };
  }

  private sign(text: string): string {
    return createHmac('sha256', this.key).update(text).digest('base64url');
  }
}
