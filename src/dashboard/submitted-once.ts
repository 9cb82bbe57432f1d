// A form that creates something carries a token minted with the page that shows it. The
// answer to its first POST may be a page that must not be shown twice (a new endpoint's
// secret), so a second POST of the same token — the browser's "resend the form?" on a
// refresh, the back button, a double click — must not create a second one: it gets the
// first one's id instead. The same token with other values (the back button, the form
// restored, another URL typed) is another form. Tokens live in memory, bounded in count and
// age: a resubmission comes seconds or minutes later, to the process that answered the first.
// The count is bounded per scope (tenant), so one tenant adding endpoints in bulk cannot push
// another tenant's recent forms out of memory.

import { createHash, randomBytes } from 'node:crypto';

/** What a token looks like: 16 random bytes, base64url. Anything else is not a token. */
const TOKEN = /^[A-Za-z0-9_-]{22}$/;

export interface SubmittedOnceOptions {
  /** Tokens remembered at most per scope; the scope's oldest go first. @default 100 */
  readonly maxEntries?: number;
  /** Scopes remembered at most; the one used least recently goes first. @default 10000 */
  readonly maxScopes?: number;
  /** How long a token is remembered. @default 1 hour */
  readonly maxAgeMs?: number;
  readonly now?: () => number;
}

export class SubmittedOnce {
  /** By scope, then by token and values; both Maps in insertion (age) order. */
  private readonly scopes = new Map<string, Map<string, { readonly at: number; readonly id: Promise<string> }>>();
  private readonly maxEntries: number;
  private readonly maxScopes: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor(options: SubmittedOnceOptions = {}) {
    this.maxEntries = options.maxEntries ?? 100;
    this.maxScopes = options.maxScopes ?? 10_000;
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
    const key = `${token}\n${createHash('sha256').update(JSON.stringify(values)).digest('base64url')}`;
    const created = this.scope(scope);
    this.forgetExpired(created);
    const earlier = created.get(key);
    if (earlier) return { repeatOf: await earlier.id };
    const creating = create();
    // Only the id is kept: what `create` returns may hold a secret.
    const id = creating.then((made) => made.id);
    created.set(key, { at: this.now(), id });
    id.catch(() => {
      if (created.get(key)?.id === id) created.delete(key);
    });
    return { created: await creating };
  }

  /** The scope's entries, moved to the end as the most recently used scope. */
  private scope(name: string): Map<string, { readonly at: number; readonly id: Promise<string> }> {
    const existing = this.scopes.get(name);
    if (existing) this.scopes.delete(name);
    else if (this.scopes.size >= this.maxScopes) this.scopes.delete(this.scopes.keys().next().value!);
    const created = existing ?? new Map();
    this.scopes.set(name, created);
    return created;
  }

  private forgetExpired(created: Map<string, { readonly at: number }>): void {
    const oldest = this.now() - this.maxAgeMs;
    // A Map iterates in insertion order, so the oldest come first.
    for (const [key, entry] of created) {
      if (entry.at >= oldest && created.size < this.maxEntries) break;
      created.delete(key);
    }
  }
}
