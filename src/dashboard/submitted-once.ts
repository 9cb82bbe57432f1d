// A form that creates something carries a token minted with the page that shows it. The
// answer to its first POST may be a page that must not be shown twice (a new endpoint's
// secret), so a second POST of the same token — the browser's "resend the form?" on a
// refresh, the back button, a double click — must not create a second one: it gets the
// first one's id instead. The same token with other values (the back button, the form
// restored, another URL typed) is another form. Tokens live in memory, bounded in count and
// age: a resubmission comes seconds or minutes later, to the process that answered the first.

import { createHash, randomBytes } from 'node:crypto';

/** What a token looks like: 16 random bytes, base64url. Anything else is not a token. */
const TOKEN = /^[A-Za-z0-9_-]{22}$/;

export interface SubmittedOnceOptions {
  /** Tokens remembered at most; the oldest go first. @default 1000 */
  readonly maxEntries?: number;
  /** How long a token is remembered. @default 1 hour */
  readonly maxAgeMs?: number;
  readonly now?: () => number;
}

export class SubmittedOnce {
  private readonly created = new Map<string, { readonly at: number; readonly id: Promise<string> }>();
  private readonly maxEntries: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(options: SubmittedOnceOptions = {}) {
    this.maxEntries = options.maxEntries ?? 1_000;
    this.maxAgeMs = options.maxAgeMs ?? 3_600_000;
    this.now = options.now ?? Date.now;
  }

  /** A token for a form about to be shown. */
  static mint(): string {
    return randomBytes(16).toString('base64url');
  }

  /**
   * Runs `create` unless `token` (within `scope`, a tenant say) was submitted before with
   * the same `values`, in which case it resolves with the id the first submission created.
   * A submission that failed is forgotten, so the form can be sent again. No token (or a
   * malformed one): `create` runs, as for a client that is not a browser form.
   */
  async submit<T extends { readonly id: string }>(
    scope: string,
    token: string | undefined,
    values: unknown,
    create: () => Promise<T>,
  ): Promise<{ readonly created: T } | { readonly repeatOf: string }> {
    if (token === undefined || !TOKEN.test(token)) return { created: await create() };
    const key = `${scope}\n${token}\n${createHash('sha256').update(JSON.stringify(values)).digest('base64url')}`;
    this.forgetExpired();
    const earlier = this.created.get(key);
    if (earlier) return { repeatOf: await earlier.id };
    const creating = create();
    // Only the id is kept: what `create` returns may hold a secret.
    const id = creating.then((made) => made.id);
    this.created.set(key, { at: this.now(), id });
    id.catch(() => {
      if (this.created.get(key)?.id === id) this.created.delete(key);
    });
    return { created: await creating };
  }

  private forgetExpired(): void {
    const oldest = this.now() - this.maxAgeMs;
    // A Map iterates in insertion order, so the oldest come first.
    for (const [key, entry] of this.created) {
      if (entry.at >= oldest && this.created.size < this.maxEntries) break;
      this.created.delete(key);
    }
  }
}
