// Loads `-- name: X` blocks from a .sql file beside a store. The block name is the Store
// method it serves (`jobClaim`) or a helper of it (`jobClaim.lease`), the same in both
// dialects so a reviewer can diff them; test/sql-parity.test.ts holds them to that.
//
// A file may also define `-- fragment: X` blocks: a piece of SQL (a predicate) that
// several statements share, written once and spliced in wherever a block says `{{X}}`.
// This is how "which pending jobs may run now" lives in one place per dialect (the
// `claimable` fragment of job.sql): every claim and drain check reads the same text, so a
// limit or a pause added to it reaches all of them. Splicing happens once, at load, so
// the statements the driver prepares are plain SQL and cost nothing more to run. Names
// in `{{…}}` that are not fragments (PostgreSQL's `{{schema}}`) are left for later.

import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export type SqlBlocks = ReadonlyMap<string, string>;

/** A file's named statements (fragments spliced in) and its fragments by name. */
export interface SqlFile {
  readonly blocks: Map<string, string>;
  readonly fragments: Map<string, string>;
}

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

/** Splits SQL text into named blocks, with the file's fragments spliced in. */
export function parseSqlBlocks(text: string): Map<string, string> {
  return parseSqlFile(text).blocks;
}

/** Splits SQL text into named blocks and fragments; text before the first marker is the file's header. */
export function parseSqlFile(text: string): SqlFile {
  const raw = new Map<string, string>();
  const fragments = new Map<string, string>();
  let target: Map<string, string> | null = null;
  let name = '';
  let lines: string[] = [];
  const flush = () => {
    if (target === null) return;
    if (raw.has(name) || fragments.has(name)) throw new Error(`SQL block "${name}" is defined twice`);
    target.set(name, lines.join('\n').trim());
  };
  for (const line of text.split('\n')) {
    const match = /^--\s*(name|fragment):\s*([A-Za-z][\w.]*)\s*$/.exec(line);
    if (match) {
      flush();
      target = match[1] === 'name' ? raw : fragments;
      name = match[2]!;
      lines = [];
    } else if (target !== null) {
      lines.push(line);
    }
  }
  flush();
  const blocks = new Map<string, string>();
  for (const [blockName, sql] of raw) blocks.set(blockName, spliceFragments(sql, fragments));
  return { blocks, fragments };
}

/**
 * `{{name}}` → the fragment's SQL (its own comment lines dropped), for every fragment name.
 * A fragment may use another (the limited claim's `startable` builds on `claimable`).
 */
function spliceFragments(sql: string, fragments: ReadonlyMap<string, string>, depth = 0): string {
  if (depth > 4) throw new Error('SQL fragments nest too deep (a fragment that uses itself?)');
  return sql.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => {
    const fragment = fragments.get(name);
    if (fragment === undefined) return whole;
    const text = fragment
      .split('\n')
      .filter((line) => !/^\s*--/.test(line))
      .join('\n');
    return spliceFragments(text, fragments, depth + 1);
  });
}

/** One block by name, or a clear error naming what is missing. */
export function sqlBlock(blocks: SqlBlocks, name: string): string {
  const sql = blocks.get(name);
  if (sql === undefined) throw new Error(`SQL block "${name}" is missing`);
  return sql;
}
