// Binds the PostgreSQL statement files to one schema. The .sql files name tables
// unqualified (`mailroom_job`) so they read like the SQLite ones; here every known
// Mailroom table name is qualified with the store's schema, and `{{schema}}` is replaced
// by the bare schema name. Qualifying (rather than setting search_path on our
// connections) is what lets the same statements run on a caller's own client in
// fromClient(), whose search_path is theirs.

import { createHash } from 'node:crypto';
import { InvalidArgumentError } from '../../core/errors.js';
import { loadSqlDir, sqlBlock } from '../sql-file.js';
import type { SqlBlocks } from '../sql-file.js';

/** Lower-case identifiers only: safe inside double quotes and single-quoted literals alike. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Every table the statements may name; word boundaries keep index names untouched. */
const TABLE_NAMES = /\bmailroom_(job|attempt|event|replay|queue_count|queue_pause|limit_start|migration|batch|endpoint|endpoint_health|endpoint_backlog|message|delivery|delivery_state|task)\b/g;

const RAW_SQL = loadSqlDir(new URL('./sql/', import.meta.url));
const bound = new Map<string, SqlBlocks>();

export function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) {
    throw new InvalidArgumentError(`The PostgreSQL schema "${schema}" must be a lower-case identifier (letters, digits, _; at most 63).`);
  }
}

/** `"schema"`: the schema as a quoted identifier (validated, so no escaping is needed). */
export function quoteSchema(schema: string): string {
  assertSchemaName(schema);
  return `"${schema}"`;
}

/** The statement blocks with table names qualified by `schema` (cached per schema). */
export function schemaSql(schema: string): SqlBlocks {
  const cached = bound.get(schema);
  if (cached) return cached;
  const quoted = quoteSchema(schema);
  const blocks = new Map<string, string>();
  for (const [name, sql] of RAW_SQL) {
    blocks.set(name, sql.replace(TABLE_NAMES, (table) => `${quoted}.${table}`).replaceAll('{{schema}}', schema));
  }
  bound.set(schema, blocks);
  return blocks;
}

export { sqlBlock };

/**
 * The NOTIFY channel of a schema's jobs; the same rule as the `mailroom_channel()` SQL
 * function the insert trigger calls (a channel name is at most 63 bytes).
 */
export function channelName(schema: string): string {
  const plain = `mailroom.${schema}`;
  return Buffer.byteLength(plain) <= 63 ? plain : `mailroom.${createHash('md5').update(schema).digest('hex')}`;
}
