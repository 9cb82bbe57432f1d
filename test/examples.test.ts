// The README's tour cannot drift from what works: every runnable code block of its "five-
// minute tour" section is found verbatim in an examples/*.ts file, and every example runs
// (tsx, in a fresh working directory, so `sqlite:./data/…` is a temp file) and prints
// exactly its trailing `// Output:` comment (River's example_*_test.go). `*.postgres.ts`
// examples run when PostgreSQL answers (as the PostgreSQL suites do). Blocks that cannot
// run at all are listed below with the reason.

import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { isPostgresAvailable } from './harness/postgres.js';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../', import.meta.url));
const EXAMPLES_DIR = join(ROOT, 'examples');
const TSX_LOADER = new URL('../node_modules/tsx/dist/loader.mjs', import.meta.url).href;
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const TOUR_HEADING = '## A five-minute tour of the library';
const OUTGOING_GUIDE = readFileSync(join(ROOT, 'docs', 'outgoing.md'), 'utf8');
const QUICK_START_HEADING = '## Quick start';

/** Tour blocks that are not run, keyed by a line they contain, with why. */
const NOT_RUN = new Map<string, string>([
  ['export async function sendEmail(payload', 'a handler signature whose body is elided (…)'],
]);

const examples = readdirSync(EXAMPLES_DIR)
  .filter((name) => name.endsWith('.ts'))
  .sort()
  .map((name) => ({ name, text: readFileSync(join(EXAMPLES_DIR, name), 'utf8'), needsPostgres: name.endsWith('.postgres.ts') }));

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The ```ts blocks of one section (a `## ` heading to the next) of a Markdown text. */
function sectionBlocks(text: string, heading: string): string[] {
  const start = text.indexOf(heading);
  const end = text.indexOf('\n## ', start + heading.length);
  return [...text.slice(start, end).matchAll(/^```ts\n([\s\S]*?)^```/gm)].map((match) => match[1]!);
}

function tourBlocks(): string[] {
  return sectionBlocks(README, TOUR_HEADING);
}

/** The lines of the trailing `// Output:` comment, without their `// ` prefix. */
function expectedOutput(text: string): string {
  const at = text.lastIndexOf('\n// Output:\n');
  if (at < 0) throw new Error('an example ends with a // Output: comment');
  return text
    .slice(at + '\n// Output:\n'.length)
    .trimEnd()
    .split('\n')
    .map((line) => line.replace(/^\/\/ ?/, ''))
    .join('\n');
}

describe("the README's tour", () => {
  it('has every runnable block verbatim in an example, and no stale entry in the list of blocks not run', () => {
    const blocks = tourBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    const missing: string[] = [];
    const skipped = new Set<string>();
    for (const block of blocks) {
      const reason = [...NOT_RUN.keys()].find((line) => block.includes(line));
      if (reason !== undefined) skipped.add(reason);
      else if (!examples.some((example) => example.text.includes(block))) missing.push(block.split('\n')[0]!);
    }
    expect(missing, 'README blocks found in no examples/*.ts (edit the example with the README)').toEqual([]);
    expect([...NOT_RUN.keys()].filter((line) => !skipped.has(line)), 'NOT_RUN entries that match no README block').toEqual([]);
  });
});

describe("docs/outgoing.md's quick start", () => {
  it('has its blocks verbatim in examples/outgoing.sqlite.ts, which runs below (a PostgreSQL block aside)', () => {
    const example = examples.find((e) => e.name === 'outgoing.sqlite.ts')!;
    // The PostgreSQL outbox block needs the reader's own client; outbox.postgres.ts runs that path.
    const blocks = sectionBlocks(OUTGOING_GUIDE, QUICK_START_HEADING).filter((block) => !block.includes("client.query('BEGIN')"));
    expect(blocks.length).toBe(3);
    expect(blocks.filter((block) => !example.text.includes(block)).map((block) => block.split('\n')[0])).toEqual([]);
  });
});

describe('examples/*.ts', () => {
  it.for(examples.map((example) => [example.name, example.text, example.needsPostgres] as const))('%s prints its Output', async ([name, text, needsPostgres], { skip }) => {
    if (needsPostgres && !isPostgresAvailable) skip();
    const cwd = mkdtempSync(join(tmpdir(), 'mailroom-example-'));
    dirs.push(cwd);
    const { stdout } = await run(process.execPath, ['--import', TSX_LOADER, join(EXAMPLES_DIR, name)], {
      cwd,
      // The repository's tsconfig maps `mailroom` to src/ (no build needed); logs stay out of the output.
      env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.json'), MAILROOM_LOG_LEVEL: 'silent', NO_COLOR: '1', FORCE_COLOR: '0' },
    });
    expect(stdout.trimEnd()).toBe(expectedOutput(text));
  });
});
