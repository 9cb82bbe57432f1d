// Copies the .sql files (statements and migrations) beside the compiled stores, and the
// dashboard's static assets (src/dashboard/assets/) beside its compiled routes: tsc only
// emits .js from .ts, and both are loaded at run time from next to the code that uses them.
import { cpSync, readdirSync, statSync, mkdirSync } from 'node:fs';
import { join, relative, dirname } from 'node:path';

const SRC = 'src';
const OUT = 'dist';
let copied = 0;
function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (name.endsWith('.sql') || dir.endsWith(join('dashboard', 'assets'))) {
      const target = join(OUT, relative(SRC, path));
      mkdirSync(dirname(target), { recursive: true });
      cpSync(path, target);
      copied++;
    }
  }
}
walk(SRC);
if (copied === 0) throw new Error('copy-sql: no .sql files found under src/');
