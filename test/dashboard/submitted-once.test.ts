// SubmittedOnce alone: a form token sent again answers with the first one's id; the memory
// of tokens is bounded per scope, so one tenant's bulk cannot evict another's recent form.

import { describe, expect, it } from 'vitest';
import { SubmittedOnce } from '../../src/dashboard/submitted-once.js';

describe('SubmittedOnce', () => {
  it('answers a repeated token with the first id, and keeps other scopes’ tokens while one scope floods', async () => {
    const once = new SubmittedOnce({ maxEntries: 3 });
    let next = 0;
    const create = async () => ({ id: String(++next) });
    const globexToken = SubmittedOnce.mint();
    expect(await once.submit('globex', globexToken, { url: 'x' }, create)).toEqual({ created: { id: '1' } });
    for (let i = 0; i < 10; i++) await once.submit('acme', SubmittedOnce.mint(), { url: `a${i}` }, create);
    expect(await once.submit('globex', globexToken, { url: 'x' }, create)).toEqual({ repeatOf: '1' });
    // Within acme the oldest went first: the flood's first token is forgotten.
    const acmeFirst = SubmittedOnce.mint();
    await once.submit('acme', acmeFirst, { url: 'first' }, create);
    for (let i = 0; i < 3; i++) await once.submit('acme', SubmittedOnce.mint(), { url: `b${i}` }, create);
    expect(await once.submit('acme', acmeFirst, { url: 'first' }, create)).toHaveProperty('created');
  });
});
