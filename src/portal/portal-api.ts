// `mr.portal`: signed, expiring links to the tenant portal (SPEC §9a), which `mailroom serve`
// answers under /portal/. A link opens one tenant's endpoints, deliveries and attempts, and
// nothing else. The secret that signs links must be the same in the process that makes them
// and in the server that answers them (`portal.secret`, MAILROOM_PORTAL_SECRET for serve).

import { ConfigError, InvalidArgumentError } from '../core/errors.js';
import { checkText } from '../outgoing/outgoing-input.js';
import { PortalSigner } from './portal-signer.js';

export interface PortalOptions {
  /**
   * Signs portal links: at least 32 characters, kept out of the code (an environment
   * variable). Changing it ends every link and portal session at once.
   * @default none: `mr.portal.link` refuses, and `serve` mounts no portal
   */
  readonly secret?: string;
  /**
   * The public URL of the server that serves the portal (`https://hooks.example.com`),
   * what links start with. @default the URL `mailroom serve` listens on when it runs in this
   * process, else http://127.0.0.1:8080
   */
  readonly baseUrl?: string;
}

/** Where `mailroom serve` listens unless told otherwise (server/mailroom-server.ts). */
export const DEFAULT_PORTAL_BASE_URL = 'http://127.0.0.1:8080';
/** One hour: long enough to look around and fix an endpoint, short if the link leaks. */
export const DEFAULT_PORTAL_LINK_TTL_MS = 3_600_000;
/** 30 days at most: a link is a bearer credential, and can only be revoked by changing the secret. */
export const MAX_PORTAL_LINK_TTL_MS = 30 * 24 * 3_600_000;
/** 32 characters: about 192 bits in a base64 secret, beyond guessing. */
const MIN_SECRET_CHARS = 32;

/**
 * Refuses a portal secret too short to sign with, naming where it came from (`portal.secret`
 * in the config, or the MAILROOM_PORTAL_SECRET variable) so the fix is found where it lives.
 * @throws ConfigError
 */
export function checkPortalSecret(secret: unknown, name: string): void {
  if (typeof secret !== 'string' || secret.length < MIN_SECRET_CHARS) {
    throw new ConfigError(name, `must be a string of at least ${MIN_SECRET_CHARS} characters (for example: openssl rand -base64 32)`);
  }
}

export class PortalApi {
  /** Null when no secret is configured: no links, no portal. */
  readonly signer: PortalSigner | null;
  private baseUrl: string;
  private readonly isBaseUrlConfigured: boolean;

  constructor(options: PortalOptions = {}, private readonly now: () => number = Date.now) {
    if (options.secret !== undefined) checkPortalSecret(options.secret, 'portal.secret');
    this.signer = options.secret === undefined ? null : new PortalSigner(options.secret);
    this.isBaseUrlConfigured = options.baseUrl !== undefined;
    this.baseUrl = options.baseUrl === undefined ? DEFAULT_PORTAL_BASE_URL : checkBaseUrl(options.baseUrl);
  }

  /**
   * A signed link that shows `tenant` the portal until `ttlMs` from now.
   * @throws ConfigError when no portal secret is configured; InvalidArgumentError for a bad tenant or ttlMs
   * @example const url = await mr.portal.link('acme', { ttlMs: 3_600_000 }); // https://…/portal/enter/…
   */
  async link(tenant: string, options: { readonly ttlMs?: number } = {}): Promise<string> {
    if (this.signer === null) throw new ConfigError('portal.secret', 'is not set, so no portal link can be signed; set it (MAILROOM_PORTAL_SECRET for mailroom serve) to the same value here and in the server');
    const ttlMs = options.ttlMs ?? DEFAULT_PORTAL_LINK_TTL_MS;
    if (typeof ttlMs !== 'number' || !Number.isInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_PORTAL_LINK_TTL_MS) {
      throw new InvalidArgumentError(`ttlMs must be a whole number of milliseconds from 1 to ${MAX_PORTAL_LINK_TTL_MS} (30 days)`);
    }
    const token = this.signer.linkToken(checkText(tenant, 'tenant'), this.now() + ttlMs);
    return `${this.baseUrl}/portal/enter/${token}`;
  }

  /** The server in this process listens at `url`: links start with it unless a base URL was configured. */
  servedAt(url: string): void {
    if (!this.isBaseUrlConfigured) this.baseUrl = checkBaseUrl(url);
  }
}

function checkBaseUrl(value: unknown): string {
  let url: URL;
  try {
    url = new URL(String(value));
  } catch {
    throw new ConfigError('portal.baseUrl', 'must be an absolute http(s) URL such as https://hooks.example.com');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new ConfigError('portal.baseUrl', 'must use http or https');
  return url.toString().replace(/\/+$/, '');
}
