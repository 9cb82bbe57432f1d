// The README and docs promise an API: every function they call by bare name is one the
// package exports, and the README names the handler's context type with every member it
// has, so a reader can write a handler without opening the source.

import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as mailroom from '../src/index.js';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const DOCS = readdirSync(new URL('../docs/', import.meta.url))
  .filter((name) => name.endsWith('.md'))
  .map((name) => ({ name: `docs/${name}`, text: readFileSync(new URL(`../docs/${name}`, import.meta.url), 'utf8') }));

describe('documentation against the package', () => {
  it('calls by bare name only functions the package exports (no internal startRetention)', () => {
    const called = new Map<string, string>();
    for (const { name, text } of [{ name: 'README.md', text: README }, ...DOCS]) {
      // camelCase identifiers called without a receiver: `createLogger(…)`, not `mr.work(…)`
      // nor an example's own `function sendEmail(…)`.
      for (const match of text.matchAll(/(?<![.\w$])(?<!function )([a-z]+[A-Z]\w*)\(/g)) called.set(match[1]!, name);
    }
    expect(called.size).toBeGreaterThan(0);
    const missing = [...called].filter(([fn]) => typeof (mailroom as Record<string, unknown>)[fn] !== 'function').map(([fn, doc]) => `${fn} in ${doc}`);
    expect(missing).toEqual([]);
  });

  it('shows every CLI command in a shell block as npx mailroom, which works without the binary on PATH', () => {
    const bare: string[] = [];
    let commands = 0;
    for (const { name, text } of [{ name: 'README.md', text: README }, ...DOCS]) {
      for (const block of text.matchAll(/^```(?:sh|bash|console)\n([\s\S]*?)^```/gm)) {
        for (const line of block[1]!.split('\n')) {
          if (/^(\$ )?mailroom\b/.test(line)) bare.push(`${name}: ${line}`);
          if (/^npx mailroom /.test(line)) commands++;
        }
      }
    }
    expect(bare).toEqual([]);
    expect(commands).toBeGreaterThan(20);
    expect(README).toContain('`npx mailroom send-test --source demo`');
  });

  it('names TaskContext in the README with every member the type has', () => {
    const source = readFileSync(new URL('../src/core/task-registry.ts', import.meta.url), 'utf8');
    const body = /export interface TaskContext<[^>]*> \{([\s\S]*?)\n\}/.exec(source)![1]!;
    const members = [...body.matchAll(/^\s+(?:readonly )?(\w+)[(:?]/gm)].map((m) => m[1]!);
    expect(members).toEqual(expect.arrayContaining(['job', 'attempt', 'signal', 'log', 'event', 'extendLease']));
    expect(README).toContain('`TaskContext`');
    for (const member of members) expect(README, member).toMatch(new RegExp(`\\| \`ctx\\.${member}[(\`]`));
  });
});
