// Reads a dialect's migration files: `NNNN_snake_name.sql`, up-only and append-only, the
// same version numbers in both dialects. The shared runner (migrator.ts) applies them.
//
// Header lines a migration may carry, at the top of the file:
//   -- no-transaction            run outside a transaction (CREATE INDEX CONCURRENTLY)
//   -- oldest-compatible-code: N code that knows only migrations up to N still runs
//                                against a schema with this one applied (say, a nullable
//                                column it never reads). Without it, only code that knows
//                                this migration does. It is stored in the ledger, so an
//                                older process can read it about a migration it never saw.

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /** `-- no-transaction` on the first line: run outside a transaction (CREATE INDEX CONCURRENTLY). */
  readonly isTransactional: boolean;
  /**
   * The oldest code version (the newest migration a release knows) that still runs
   * against a schema with this migration applied; `version` when the file does not say.
   */
  readonly oldestCompatibleCode: number;
}

const MIGRATION_FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;
const OLDEST_COMPATIBLE_CODE = /^--\s*oldest-compatible-code:\s*(\d+)\s*$/m;

export function loadMigrations(dir: URL): Migration[] {
  const path = fileURLToPath(dir);
  const migrations: Migration[] = [];
  for (const file of readdirSync(path).sort()) {
    const match = MIGRATION_FILE.exec(file);
    if (!match) continue;
    const sql = readFileSync(new URL(file, dir), 'utf8');
    const version = Number(match[1]);
    const declared = OLDEST_COMPATIBLE_CODE.exec(headerOf(sql))?.[1];
    const oldestCompatibleCode = declared === undefined ? version : Number(declared);
    if (oldestCompatibleCode > version || oldestCompatibleCode < 1) {
      throw new Error(`${file}: oldest-compatible-code must be between 1 and ${version}`);
    }
    migrations.push({ version, name: match[2]!, sql, isTransactional: !/^--\s*no-transaction/.test(sql), oldestCompatibleCode });
  }
  // Versions rise strictly. A gap is allowed while parallel branches each reserve a
  // number (0012 landed before 0011): the runner applies what the ledger lacks, in order.
  migrations.forEach((m, index) => {
    if (index > 0 && m.version <= migrations[index - 1]!.version) throw new Error(`migrations in ${path} must be numbered in rising order, each once`);
  });
  return migrations;
}

/** The comment lines before a migration's first statement. */
function headerOf(sql: string): string {
  const lines = sql.split('\n');
  const end = lines.findIndex((line) => line.trim() !== '' && !line.trimStart().startsWith('--'));
  return (end === -1 ? lines : lines.slice(0, end)).join('\n');
}

/** The newest version a list of migrations knows. */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.length === 0 ? 0 : migrations[migrations.length - 1]!.version;
}
