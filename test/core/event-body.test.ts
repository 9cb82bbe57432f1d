// What a handler gets as the payload of a job fanned out from a webhook: the stored body,
// parsed by its content type (src/core/event-body.ts).

import { describe, expect, it } from 'vitest';
import { parseEventBody } from '../../src/core/event-body.js';

const form = (fields: Record<string, string>) => Buffer.from(new URLSearchParams(fields).toString(), 'utf8');

describe('parseEventBody', () => {
  it('parses JSON, and a body without a content type when it is JSON', () => {
    expect(parseEventBody(Buffer.from('{"a":1}'), 'application/json; charset=utf-8')).toEqual({ a: 1 });
    expect(parseEventBody(Buffer.from('{"a":1}'), undefined)).toEqual({ a: 1 });
    expect(parseEventBody(Buffer.from('not json'), undefined)).toBe('not json');
  });

  it("gives the JSON in a form-encoded body's payload field (GitHub's form content type)", () => {
    const event = { ref: 'refs/heads/main', repository: { full_name: 'octo/repo' } };
    expect(parseEventBody(form({ payload: JSON.stringify(event) }), 'application/x-www-form-urlencoded')).toEqual(event);
    expect(parseEventBody(form({ payload: 'null' }), 'application/x-www-form-urlencoded')).toBeNull();
  });

  it('hands any other form over as text: more fields, or a payload that is not JSON', () => {
    const twoFields = form({ payload: '{"a":1}', other: 'x' });
    expect(parseEventBody(twoFields, 'application/x-www-form-urlencoded')).toBe(twoFields.toString('utf8'));
    const notJson = form({ payload: 'hello' });
    expect(parseEventBody(notJson, 'application/x-www-form-urlencoded')).toBe(notJson.toString('utf8'));
    expect(parseEventBody(Buffer.from('a=1'), 'text/plain')).toBe('a=1');
  });
});
