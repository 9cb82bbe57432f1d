// What `npm install` of this package gets: an install from git builds dist/ (prepare),
// and the tarball carries the license, the entry points, their declarations, the SQL the
// stores load at run time, the sources their maps name, and the examples the docs point
// to. `npm test` builds first; `npm pack --dry-run` only lists.

import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
  license: string;
  scripts: Record<string, string>;
  main: string;
  types: string;
  bin: Record<string, string>;
};

describe('the package', () => {
  it('builds dist/ on prepare, so an install from git has the code it runs', () => {
    expect(pkg.scripts.prepare).toBe('npm run build');
  });

  it('ships a LICENSE matching the license package.json declares', () => {
    const license = readFileSync(new URL('../LICENSE', import.meta.url), 'utf8');
    expect(pkg.license).toBe('MIT');
    expect(license.split('\n')[0]).toBe('MIT License');
    expect(license).toContain('Permission is hereby granted, free of charge');
  });

  it('packs the license, the entry points with declarations, every statement and migration file, and the examples', () => {
    const [packed] = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 }),
    ) as Array<{ files: Array<{ path: string }> }>;
    const files = new Set(packed!.files.map((file) => file.path));
    const entries = [pkg.main, pkg.types, ...Object.values(pkg.bin)].map((path) => path.replace(/^\.\//, ''));
    for (const path of ['LICENSE', 'README.md', 'package.json', ...entries]) expect(files, path).toContain(path);
    // docs/outgoing.md names this file as the whole quick-start program: the reader has it.
    expect(files, 'examples/outgoing.sqlite.ts').toContain('examples/outgoing.sqlite.ts');
    // Source maps name ../src/*.ts: a stack trace under --enable-source-maps (tsx turns it
    // on) points there, so the sources ship too.
    const maps = [...files].filter((path) => path.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(10);
    for (const map of maps) {
      const { sources } = JSON.parse(readFileSync(new URL(`../${map}`, import.meta.url), 'utf8')) as { sources: string[] };
      for (const source of sources) expect(files, `${map} -> ${source}`).toContain(posix.join(posix.dirname(map), source));
    }
    for (const dialect of ['sqlite', 'postgres']) {
      for (const dir of ['sql', 'migrations']) {
        for (const name of readdirSync(new URL(`../src/store/${dialect}/${dir}/`, import.meta.url))) expect(files, `${dialect}/${dir}/${name}`).toContain(`dist/store/${dialect}/${dir}/${name}`);
      }
    }
  });

  it('declares no emitter with an inferred tuple for its events, which newer @types/node refuse to compile', () => {
    // `new EventEmitter()` in a field without a type was declared `EventEmitter<[never]>`:
    // fine under @types/node 20, error TS2344 in a user's strict build on later ones.
    const declarations = readdirSync(new URL('../dist/', import.meta.url), { recursive: true, encoding: 'utf8' }).filter((path) => path.endsWith('.d.ts'));
    expect(declarations.length).toBeGreaterThan(10);
    const inferred = declarations.filter((path) => /:\s*EventEmitter<\[/.test(readFileSync(new URL(`../dist/${path}`, import.meta.url), 'utf8')));
    expect(inferred).toEqual([]);
  });
});
