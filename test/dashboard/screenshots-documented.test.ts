// The screenshots docs/dashboard.md shows are the ones browser.test.ts takes
// (MAILROOM_SCREENSHOTS=1): every picture the test saves is committed and shown in the
// doc, and every dashboard picture the doc shows is one the test saves, so `npm run
// screenshots` neither leaves stray files nor lets a shown picture go stale.

import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

describe('dashboard screenshots', () => {
  it('are taken by the browser test, committed under docs/images and shown in docs/dashboard.md, all the same set', () => {
    const taken = [...read('test/dashboard/browser.test.ts').matchAll(/\bshoot\(page, '([\w-]+)'/g)].map((m) => `dashboard-${m[1]}.png`).sort();
    const shown = [...read('docs/dashboard.md').matchAll(/!\[[^\]]*\]\(images\/(dashboard-[\w-]+\.png)\)/g)].map((m) => m[1]!).sort();
    const committed = readdirSync(new URL('../../docs/images/', import.meta.url)).filter((name) => /^dashboard-.*\.png$/.test(name)).sort();
    expect(taken.length).toBeGreaterThan(0);
    expect(shown).toEqual(taken);
    expect(committed).toEqual(taken);
  });
});
