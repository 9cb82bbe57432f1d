// Opens the SQLite database and sets what every connection of the store needs: WAL, a
// short busy timeout, a bounded WAL, and the two durability classes. Nothing here runs a
// statement of Mailroom's; the write engine (write-engine.ts) does that.
//
// Durability (`synchronous`): in 'full' mode acknowledgements (enqueue, ingress, replay,
// cancel) commit with synchronous=FULL and survive power loss; worker bookkeeping (claim,
// heartbeat, outcome) commits with NORMAL: in WAL mode the next FULL commit flushes it,
// a process crash loses nothing, and a step lost to power loss only runs a job again.
// 'normal' commits everything with NORMAL.

import { mkdirSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { StoreUrlError } from '../../core/errors.js';
import { assertLocalFilesystem } from './filesystem-check.js';
import type { FilesystemType } from './filesystem-check.js';

export type SqliteSynchronous = 'full' | 'normal';

/** The `synchronous` pragma level a write commits with. */
export type SynchronousLevel = 'FULL' | 'NORMAL';

export interface SqliteConnectionOptions {
  /** A file path or ':memory:'. Ignored when `database` is given. */
  readonly path?: string;
  /** An open better-sqlite3 Database to share (the app's own tables use it for the outbox). */
  readonly database?: Database.Database;
  /** @default 'full' (acknowledgements FULL, worker bookkeeping NORMAL) */
  readonly synchronous?: SqliteSynchronous;
  /** How long one statement waits inside SQLite for a lock; short so the event loop stays free. @default 200 */
  readonly busyTimeoutMs?: number;
  /** Reads the filesystem type of the database's folder (tests stub it). @default statfs */
  readonly filesystemType?: FilesystemType;
}

/** An open database with the store's settings applied. */
export interface SqliteConnection {
  readonly db: Database.Database;
  /** False for a handle the application shares: the store neither closes nor checkpoints it. */
  readonly ownsDatabase: boolean;
  /** What acknowledgements commit with; worker bookkeeping always commits with NORMAL. */
  readonly ackSynchronous: SynchronousLevel;
  /** Durability in force, for stats() and the startup log. */
  readonly durability: Record<string, string>;
  readonly description: string;
}

const DEFAULT_BUSY_TIMEOUT_MS = 200;
/** 64 MiB: a WAL file that grew past this is cut back to it when a writer starts the WAL over (wal-checkpointer.ts starts it over). */
const JOURNAL_SIZE_LIMIT_BYTES = 67_108_864;

export function openSqliteConnection(options: SqliteConnectionOptions): SqliteConnection {
  const synchronous = options.synchronous ?? 'full';
  let db: Database.Database;
  let ownsDatabase: boolean;
  if (options.database) {
    db = options.database;
    ownsDatabase = false;
  } else {
    const path = options.path ?? ':memory:';
    if (path !== ':memory:') {
      makeParentDirectory(path);
      assertLocalFilesystem(dirname(path), options.filesystemType);
    }
    db = new Database(path);
    ownsDatabase = true;
  }
  db.pragma('journal_mode = WAL');
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? DEFAULT_BUSY_TIMEOUT_MS))}`);
  db.pragma(`journal_size_limit = ${JOURNAL_SIZE_LIMIT_BYTES}`);
  const ackSynchronous: SynchronousLevel = synchronous === 'full' ? 'FULL' : 'NORMAL';
  return {
    db,
    ownsDatabase,
    ackSynchronous,
    durability: {
      store: 'sqlite',
      synchronous,
      acknowledgements: ackSynchronous,
      bookkeeping: 'NORMAL',
      journal: String(db.pragma('journal_mode', { simple: true })),
    },
    description: `sqlite ${db.name} (synchronous=${synchronous}: acknowledgements ${ackSynchronous}, worker bookkeeping NORMAL)`,
  };
}

/**
 * Creates the directory the database file goes in. A path under a regular file fails
 * with a raw EEXIST or ENOTDIR from mkdir; say instead which part of the path is a file.
 */
function makeParentDirectory(path: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EEXIST' && code !== 'ENOTDIR') throw error;
    let file = dirname(path);
    while (dirname(file) !== file && !isFile(file)) file = dirname(file);
    throw new StoreUrlError(`The SQLite path ${path} is under ${file}, which is a file, not a directory.`);
  }
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false; // ENOENT, or ENOTDIR below the file we are looking for
  }
}
