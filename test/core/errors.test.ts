// The error registry: codes, data carried by each error, prototypes that survive, and
// handler control errors recognised by code across copies of the package.

import { describe, expect, it } from 'vitest';
import {
  ERROR_CODES,
  InvalidArgumentError,
  JobStateError,
  boundedStack,
  KeyConflictError,
  MailroomError,
  Permanent,
  RetryAfter,
  SchemaTooNewError,
  StoreUnavailableError,
  describeError,
  hasCode,
  isPermanent,
  retryAfterDelayMs,
} from '../../src/core/errors.js';

describe('error registry', () => {
  it('names every code MR_ERR_<NOUN>_<PROBLEM> with a description', () => {
    for (const [code, description] of Object.entries(ERROR_CODES)) {
      expect(code).toMatch(/^MR_ERR_[A-Z]+(_[A-Z]+)+$|^MR_ERR_[A-Z]+$/);
      expect(description.length).toBeGreaterThan(10);
    }
  });

  it('gives each error its class name, code, prototype and cause', () => {
    const cause = new Error('disk');
    const error = new StoreUnavailableError('store down', { cause, retryAfterMs: 2_000 });
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect(error).toBeInstanceOf(MailroomError);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('StoreUnavailableError');
    expect(error.code).toBe('MR_ERR_STORE_UNAVAILABLE');
    expect(error.httpStatus).toBe(503);
    expect(error.retryAfterMs).toBe(2_000);
    expect(error.cause).toBe(cause);
  });

  it('carries the conflicting key and the existing job id on KeyConflictError', () => {
    const error = new KeyConflictError('order:7', '42');
    expect(error).toMatchObject({ key: 'order:7', existingJobId: '42', code: 'MR_ERR_KEY_CONFLICT', httpStatus: 409 });
    expect(error.message).toContain('order:7');
    expect(error.message).toContain('42');
  });

  it('names both versions and what to do in SchemaTooNewError', () => {
    const error = new SchemaTooNewError(7, 3);
    expect(error).toMatchObject({ databaseVersion: 7, codeVersion: 3, code: 'MR_ERR_SCHEMA_TOO_NEW' });
    expect(error.message).toMatch(/\b7\b/);
    expect(error.message).toMatch(/\b3\b/);
    expect(error.message).toMatch(/upgrade/i);
  });

  it('says which job and state refused an operation in JobStateError', () => {
    expect(new JobStateError('5', 'running', 'cancel').message).toBe('Job 5 is running; cannot cancel it.');
  });
});

describe('bounded stacks', () => {
  it('keeps a short stack whole and cuts a long one to 40 lines and 4,000 characters, saying how much was cut', () => {
    const short = new Error('smtp 421');
    expect(boundedStack(short)).toBe(short.stack);
    const long = { stack: ['Error: deep', ...Array.from({ length: 100 }, (_, i) => `    at frame${i} (/app/deep.js:${i}:1)`)].join('\n') };
    const cut = boundedStack(long)!;
    expect(cut.split('\n')).toHaveLength(41);
    expect(cut.split('\n')[40]).toBe('    … 61 more lines');
    const wide = boundedStack({ stack: `Error: ${'x'.repeat(10_000)}` })!;
    expect(wide.length).toBe(4_001);
    expect(wide.endsWith('…')).toBe(true);
    for (const none of [null, 'a string', { message: 'no stack' }, { stack: '  ' }]) expect(boundedStack(none)).toBeNull();
  });
});

describe('handler control errors', () => {
  it('recognises Permanent by its code, including a copy from another package install', () => {
    expect(isPermanent(new Permanent('no such order'))).toBe(true);
    expect(isPermanent({ code: 'MR_ERR_PERMANENT', message: 'foreign copy' })).toBe(true);
    expect(isPermanent(new Error('plain'))).toBe(false);
    expect(isPermanent(null)).toBe(false);
  });

  it('reads the delay of a RetryAfter, including a copy from another package install', () => {
    expect(retryAfterDelayMs(new RetryAfter(30_000, 'rate limited'))).toBe(30_000);
    expect(retryAfterDelayMs({ code: 'MR_ERR_RETRY_AFTER', delayMs: 5 })).toBe(5);
    expect(retryAfterDelayMs({ code: 'MR_ERR_RETRY_AFTER', delayMs: -1 })).toBeNull();
    expect(retryAfterDelayMs(new Permanent())).toBeNull();
  });

  it('refuses a RetryAfter with a negative or non-finite delay', () => {
    expect(() => new RetryAfter(-1)).toThrow(InvalidArgumentError);
    expect(() => new RetryAfter(Number.POSITIVE_INFINITY)).toThrow(InvalidArgumentError);
  });

  it('matches codes only on objects that carry them', () => {
    expect(hasCode(new Permanent(), 'MR_ERR_PERMANENT')).toBe(true);
    expect(hasCode('MR_ERR_PERMANENT', 'MR_ERR_PERMANENT')).toBe(false);
    expect(hasCode(undefined, 'MR_ERR_PERMANENT')).toBe(false);
  });
});

describe('describeError', () => {
  it('writes name and message on one line', () => {
    expect(describeError(new TypeError('bad input'))).toBe('TypeError: bad input');
    expect(describeError(new Permanent('no such order'))).toBe('Permanent: no such order');
  });

  it('describes non-errors that were thrown, even unserialisable ones', () => {
    expect(describeError('oops')).toBe('non-error thrown: "oops"');
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(describeError(circular)).toBe('non-error thrown');
  });

  it('bounds a huge message so lastError stays small', () => {
    expect(describeError(new Error('x'.repeat(100_000))).length).toBeLessThanOrEqual(4_100);
  });
});
