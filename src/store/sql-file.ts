// Loads `-- name: X` blocks from a .sql file beside a store. The block name is the Store
// method it serves (`jobClaim`) or a helper of it (`jobClaim.inQueues`), the same in both
// dialects so a reviewer can diff them; test/sql-parity.test.ts holds them to that.

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type SqlBlocks = ReadonlyMap<string, string>;

const cache = new Map<string, SqlBlocks>();

/** Every named block of every .sql file in `dir` (a `file:` URL ending in `/`). */
export function loadSqlDir(dir: URL): SqlBlocks {
  const key = dir.href;
  const cached = cache.get(key);
  if (cached) return cached;
  const path = fileURLToPath(dir);
  let files: string[];
  try {
    files = readdirSync(path).filter((name) => name.endsWith('.sql')).sort();
  } catch (cause) {
    // Fail fast and plainly: a build that forgot to copy the SQL must not start.
    throw new Error(`Mailroom cannot read its SQL directory ${path}; was the package built with its .sql files?`, { cause });
  }
  const blocks = new Map<string, string>();
  for (const file of files) {
    for (const [name, sql] of parseSqlBlocks(readFileSync(new URL(file, dir), 'utf8'))) {
      if (blocks.has(name)) throw new Error(`SQL block "${name}" is defined twice in ${path}`);
      blocks.set(name, sql);
    }
  }
  cache.set(key, blocks);
  return blocks;
}

/** Splits SQL text into named blocks; text before the first name is the file's header. */
export function parseSqlBlocks(text: string): Map<string, string> {
  const blocks = new Map<string, string>();
  let name: string | null = null;
  let lines: string[] = [];
  const flush = () => {
    if (name !== null) blocks.set(name, lines.join('\n').trim());
  };
  for (const line of text.split('\n')) {
    const match = /^--\s*name:\s*([A-Za-z][\w.]*)\s*$/.exec(line);
    if (match) {
      flush();
      name = match[1]!;
      lines = [];
    } else if (name !== null) {
      lines.push(line);
    }
  }
  flush();
  return blocks;
}

/** One block by name, or a clear error naming what is missing. */
export function sqlBlock(blocks: SqlBlocks, name: string): string {
  const sql = blocks.get(name);
  if (sql === undefined) throw new Error(`SQL block "${name}" is missing`);
  return sql;
}
