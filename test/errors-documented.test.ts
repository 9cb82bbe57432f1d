// Every error code in the registry is documented in docs/errors.md, and every documented
// code exists: users match on codes, so the page must never drift from the code.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/core/errors.js';

const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
const documented = new Set([...doc.matchAll(/^### (MR_ERR_[A-Z_]+)\s*$/gm)].map((m) => m[1]));

describe('error codes', () => {
  it('documents every code in the registry', () => {
    const missing = Object.keys(ERROR_CODES).filter((code) => !documented.has(code));
    expect(missing).toEqual([]);
  });

  it('documents no code that the registry lacks', () => {
    const stale = [...documented].filter((code) => !(code in ERROR_CODES));
    expect(stale).toEqual([]);
  });

  it('names every code MR_ERR_ in upper snake case', () => {
    for (const code of Object.keys(ERROR_CODES)) expect(code).toMatch(/^MR_ERR_[A-Z]+(_[A-Z]+)*$/);
  });
});
