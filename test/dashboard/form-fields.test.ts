import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { parseTime } from '../../src/dashboard/form-fields.js';

describe('parseTime', () => {
  it("reads the form's times as UTC and ISO 8601 with its own zone", () => {
    expect(parseTime('2026-01-31', 'before').toISOString()).toBe('2026-01-31T00:00:00.000Z');
    expect(parseTime('2026-01-31T23:59', 'before').toISOString()).toBe('2026-01-31T23:59:00.000Z');
    expect(parseTime('2024-02-29T12:00:30', 'before').toISOString()).toBe('2024-02-29T12:00:30.000Z');
    expect(parseTime('2026-01-31T23:59:00+02:00', 'before').toISOString()).toBe('2026-01-31T21:59:00.000Z');
  });

  it('refuses a day the calendar lacks rather than rolling it into the next month, and text that is no time', () => {
    for (const text of ['2026-02-30', '2026-02-29T10:00', '2026-04-31', 'yesterday', '2026-13-01', '2026-02-30T10:00Z', '2026-02-29T00:00:00.000Z', '2026-02-30T10:00+02:00', '1', '12/31/2026']) {
      expect(() => parseTime(text, 'before'), text).toThrow(InvalidArgumentError);
      expect(() => parseTime(text, 'since'), text).toThrow('since must be a time such as 2026-01-31T23:59 (UTC)');
    }
  });
});
