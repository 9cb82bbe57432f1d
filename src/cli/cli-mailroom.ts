// How a command opens Mailroom: the config file (--config, else ./mailroom.config.js/.mjs
// when present) so CLI-enqueued jobs get the configured task policies, the store URL
// (--db, then MAILROOM_DB, then the config's db, then the default), and a logger that
// writes to the command's stderr so it never mixes with --json on stdout.

import { existsSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import type { MailroomConfig } from '../config/define-config.js';
import { loadConfig } from '../config/load-config.js';
import { DEFAULT_DB_URL, openMailroomFromConfig } from '../config/open-mailroom.js';
import { createLogger } from '../log.js';
import type { Logger } from '../log.js';
import type { RetentionSettings } from '../maintenance/retention.js';
import type { Mailroom } from '../mailroom.js';
import { checkPortalSecret } from '../portal/portal-api.js';
import { StoreUrlError } from '../core/errors.js';
import { parseStoreUrl, printableStoreUrl } from '../store/store-url.js';
import type { ParsedStoreUrl } from '../store/store-url.js';
import type { CommonOptions } from './args.js';
import type { CliIo } from './command.js';

export interface CliMailroom {
  readonly mr: Mailroom;
  readonly config: MailroomConfig | null;
  readonly log: Logger;
  /** The store URL in use, for messages (never printed with a password). */
  readonly db: string;
}

export interface OpenCliMailroomOptions {
  /**
   * Apply migrations on open. Read-only commands pass false, so pointing `jobs` at the
   * wrong file does not quietly create an empty database there.
   * @default true
   */
  readonly migrate?: boolean;
  /** With migrate false: refuse a database whose schema is missing or behind. @default true */
  readonly checkSchema?: boolean;
  /** Log level when MAILROOM_LOG_LEVEL is unset. One-shot commands stay quiet. @default 'warn' */
  readonly logLevel?: string;
  /** Where log lines go. @default io.stderr */
  readonly logTo?: 'stdout' | 'stderr';
  /** Human-readable log lines; default: when the stream is a terminal. */
  readonly prettyLogs?: boolean;
  /**
   * Refuse a config whose sources' webhook secrets are unset. Only the commands that
   * receive webhooks need them (serve); a command that reads or operates on the store
   * must work from a shell that lacks them. @default false
   */
  readonly requireSourceSecrets?: boolean;
  /**
   * Load the config's task modules and register its tasks. Only commands that run
   * handlers or enqueue by a task's policy need them; the rest (jobs, stats, replay, …)
   * must work at 3 am with a module that does not load or throws at import without its
   * environment. @default true unless migrate is false
   */
  readonly registerTasks?: boolean;
  /**
   * Retention for the process's workers, over the config's `retention` (see
   * Mailroom.open); false: none. Only serve and worker start workers. @default the config's
   */
  readonly retention?: RetentionSettings | false;
}

/** The store URL a command uses: --db, MAILROOM_DB, the config's db, the default. */
export function resolveDbUrl(common: CommonOptions, io: CliIo, config: MailroomConfig | null): string {
  const url = common.db ?? nonEmpty(io.env.MAILROOM_DB) ?? config?.db ?? DEFAULT_DB_URL;
  return anchorSqlitePath(url, io.cwd);
}

/**
 * Relative SQLite paths are relative to the command's working directory (io.cwd), not to
 * wherever the process happened to start: tests and wrappers run commands in-process.
 * The URL is read by store-url.ts, the one parser of store URLs; one it refuses is
 * returned as given, so opening it reports the problem after the config's own checks.
 */
export function anchorSqlitePath(url: string, cwd: string): string {
  let parsed: ParsedStoreUrl;
  try {
    parsed = parseStoreUrl(url);
  } catch (error) {
    if (error instanceof StoreUrlError) return url;
    throw error;
  }
  if (parsed.kind !== 'sqlite' || parsed.path === ':memory:' || isAbsolute(parsed.path)) return url;
  return `sqlite:${resolve(cwd, parsed.path)}${parsed.synchronous === undefined ? '' : `?synchronous=${parsed.synchronous}`}`;
}

export async function openCliMailroom(common: CommonOptions, io: CliIo, options: OpenCliMailroomOptions = {}): Promise<CliMailroom> {
  const requireSourceSecrets = options.requireSourceSecrets ?? false;
  const config = await loadConfig({ path: common.config, cwd: io.cwd, requireSourceSecrets });
  const db = resolveDbUrl(common, io, config);
  const log = createLogger({
    level: nonEmpty(io.env.MAILROOM_LOG_LEVEL) ?? options.logLevel ?? 'warn',
    destination: options.logTo === 'stdout' ? io.stdout : io.stderr,
    pretty: options.prettyLogs,
  });
  const isReadOnly = options.migrate === false && options.checkSchema !== false;
  // Opening a SQLite file creates it: a mistyped --db would leave an empty database behind.
  if (isReadOnly) refuseMissingSqliteFile(db);
  const portalSecret = nonEmpty(io.env.MAILROOM_PORTAL_SECRET);
  if (portalSecret !== undefined) checkPortalSecret(portalSecret, 'MAILROOM_PORTAL_SECRET');
  const mr = await openMailroomFromConfig({
    config,
    db,
    logger: log,
    requireSourceSecrets,
    registerTasks: options.registerTasks ?? options.migrate !== false,
    open: { migrate: options.migrate ?? true, retention: options.retention, portal: { secret: portalSecret } },
  });
  if (isReadOnly) {
    const version = await mr.store.schemaVersion().catch(async (error: unknown) => {
      await mr.close();
      throw error;
    });
    if (version.database < version.code) {
      await mr.close();
      const where = printableStoreUrl(db);
      throw new Error(
        version.database === 0
          ? `No Mailroom tables at ${where}; check --db / MAILROOM_DB, or run ${migrateCommand(where)} to create them.`
          : `The schema at ${where} is at version ${version.database}, this Mailroom needs ${version.code}; run ${migrateCommand(where)} first.`,
      );
    }
  }
  return { mr, config, log, db };
}

function refuseMissingSqliteFile(db: string): void {
  const parsed = parseStoreUrl(db);
  if (parsed.kind !== 'sqlite' || parsed.path === ':memory:' || existsSync(parsed.path)) return;
  const where = printableStoreUrl(db);
  throw new Error(`No database at ${where}; check --db / MAILROOM_DB, or run ${migrateCommand(where)} to create one.`);
}

/**
 * The migrate command for a store, to paste, from its printable URL: with the URL when it
 * is shown whole; a URL with a password is shown masked, which would not paste, so then in words.
 */
function migrateCommand(where: string): string {
  return where.includes('***') ? '`mailroom migrate` with the same --db / MAILROOM_DB' : `\`mailroom migrate --db ${where}\``;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * Opens Mailroom, runs `fn`, and closes it (workers stopped, store closed) however fn ends.
 * @example return withCliMailroom(opts.common, io, { migrate: false }, async ({ mr }) => { ... });
 */
export async function withCliMailroom<T>(
  common: CommonOptions,
  io: CliIo,
  options: OpenCliMailroomOptions,
  fn: (cli: CliMailroom) => Promise<T>,
): Promise<T> {
  const cli = await openCliMailroom(common, io, options);
  try {
    return await fn(cli);
  } finally {
    await cli.mr.close();
  }
}
