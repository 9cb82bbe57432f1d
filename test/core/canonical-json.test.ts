// Canonical JSON decides whether a reused idempotency key carries "the same" payload:
// key order never matters, anything else does.

import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { canonicalJson, sameJson } from '../../src/core/canonical-json.js';

describe('canonicalJson', () => {
  it('sorts object keys at every depth and keeps array order', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it('leaves scalars as JSON.stringify writes them', () => {
    expect(canonicalJson('x')).toBe('"x"');
    expect(canonicalJson(1.5)).toBe('1.5');
    expect(canonicalJson(null)).toBe('null');
  });

  it('gives the same text for any key order of the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const reversed = JSON.parse(JSON.stringify(value), (_key, v) =>
          v !== null && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
        );
        return canonicalJson(reversed) === canonicalJson(value);
      }),
    );
  });
});

describe('sameJson', () => {
  it('treats texts that differ only in key order and whitespace as the same', () => {
    expect(sameJson('{"a":1,"b":[1,2]}', '{ "b": [1, 2], "a": 1 }')).toBe(true);
  });

  it('treats different values, array orders and types as different', () => {
    expect(sameJson('{"a":1}', '{"a":2}')).toBe(false);
    expect(sameJson('[1,2]', '[2,1]')).toBe(false);
    expect(sameJson('{"a":1}', '{"a":"1"}')).toBe(false);
    expect(sameJson('{"a":1}', '{"a":1,"b":null}')).toBe(false);
  });

  it('treats unparsable text as different from anything but itself', () => {
    expect(sameJson('{not json', '{"a":1}')).toBe(false);
    expect(sameJson('{not json', '{not json')).toBe(true);
  });
});
