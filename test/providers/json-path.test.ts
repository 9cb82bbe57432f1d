// The small JSON path used for delivery ids and group keys.

import { describe, expect, it } from 'vitest';
import { parseJsonPath, readJsonPath, readJsonPathId } from '../../src/providers/json-path.js';

const event = { id: 'evt_1', n: 7, data: { object: { customer: 'cus_9' } }, items: [{ id: 'a' }, { id: 'b' }], flag: true, empty: '' };

describe('json path', () => {
  it('parses root, dotted names and indices', () => {
    expect(parseJsonPath('$')).toEqual([]);
    expect(parseJsonPath('$.data.object.customer')).toEqual(['data', 'object', 'customer']);
    expect(parseJsonPath('$.items[1].id')).toEqual(['items', 1, 'id']);
    expect(parseJsonPath('$.event-id')).toEqual(['event-id']);
  });

  it('refuses what it does not support', () => {
    for (const path of ['', 'id', '$.', '$..id', '$.a.', '$[*]', "$['a']", '$.a[-1]', '$ .a', '$.1a']) {
      expect(parseJsonPath(path), path).toBeNull();
    }
  });

  it('reads nested values and gives undefined for anything missing', () => {
    expect(readJsonPath(event, parseJsonPath('$.data.object.customer')!)).toBe('cus_9');
    expect(readJsonPath(event, parseJsonPath('$.items[1].id')!)).toBe('b');
    expect(readJsonPath(event, parseJsonPath('$.items[2].id')!)).toBeUndefined();
    expect(readJsonPath(event, parseJsonPath('$.id.length')!)).toBeUndefined();
    expect(readJsonPath(event, parseJsonPath('$.data[0]')!)).toBeUndefined();
    expect(readJsonPath(null, parseJsonPath('$.a')!)).toBeUndefined();
  });

  it('never reaches the prototype chain', () => {
    expect(readJsonPath(event, parseJsonPath('$.constructor')!)).toBeUndefined();
    expect(readJsonPath(event, parseJsonPath('$.__proto__')!)).toBeUndefined();
    expect(readJsonPath([], parseJsonPath('$.length')!)).toBeUndefined();
  });

  it('turns strings and numbers into id text and everything else into null', () => {
    expect(readJsonPathId(event, '$.id')).toBe('evt_1');
    expect(readJsonPathId(event, '$.n')).toBe('7');
    expect(readJsonPathId(event, '$.data')).toBeNull();
    expect(readJsonPathId(event, '$.flag')).toBeNull();
    expect(readJsonPathId(event, '$.empty')).toBeNull();
    expect(readJsonPathId(event, 'not a path')).toBeNull();
  });
});
