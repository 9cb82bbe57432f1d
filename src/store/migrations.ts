// Reads a dialect's migration files: `NNNN_snake_name.sql`, up-only and append-only, the
// same version numbers in both dialects. The runners (one per store) apply them in order.

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
  /** `-- no-transaction` on the first line: run outside a transaction (CREATE INDEX CONCURRENTLY). */
  readonly isTransactional: boolean;
}

const MIGRATION_FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export function loadMigrations(dir: URL): Migration[] {
  const path = fileURLToPath(dir);
  const migrations: Migration[] = [];
  for (const file of readdirSync(path).sort()) {
    const match = MIGRATION_FILE.exec(file);
    if (!match) continue;
    const sql = readFileSync(new URL(file, dir), 'utf8');
    migrations.push({
      version: Number(match[1]),
      name: match[2]!,
      sql,
      isTransactional: !/^--\s*no-transaction/.test(sql),
    });
  }
  migrations.forEach((m, index) => {
    if (m.version !== index + 1) throw new Error(`migrations in ${path} must be numbered 0001, 0002, … without gaps`);
  });
  return migrations;
}

/** The newest version a list of migrations knows. */
export function latestVersion(migrations: readonly Migration[]): number {
  return migrations.length === 0 ? 0 : migrations[migrations.length - 1]!.version;
}
