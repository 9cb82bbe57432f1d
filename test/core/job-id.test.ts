// The one id check every layer uses (stores, CLI): a decimal string of a positive int64.

import { describe, expect, it } from 'vitest';
import { isJobId, normalizeJobId } from '../../src/core/job-id.js';
import { compareJobIds } from '../../src/store/claimed-job.js';

describe('job ids', () => {
  it('accepts decimal strings up to the int64 maximum and nothing else', () => {
    for (const id of ['1', '42', '0042', '9223372036854775807']) expect(isJobId(id)).toBe(true);
    for (const id of ['9223372036854775808', '99999999999999999999', '', 'abc', ' 1', '-1', '1.5', '1e3', 42, null]) expect(isJobId(id)).toBe(false);
  });

  it('normalizes leading zeros away and refuses zero and malformed text', () => {
    expect(normalizeJobId('0042')).toBe('42');
    expect(normalizeJobId('7')).toBe('7');
    for (const text of ['0', '000', '', 'abc', '-3', '9223372036854775808', undefined]) expect(normalizeJobId(text)).toBeNull();
  });

  it('orders ids numerically, as text (PostgreSQL) and as numbers (SQLite)', () => {
    const text = ['10', '9', '9223372036854775807', '100', '11', '2', '922337203685477580'];
    expect([...text].sort(compareJobIds)).toEqual(['2', '9', '10', '11', '100', '922337203685477580', '9223372036854775807']);
    expect(compareJobIds('42', '42')).toBe(0);
    expect([10, 9, 100, 2].sort(compareJobIds)).toEqual([2, 9, 10, 100]);
  });
});
