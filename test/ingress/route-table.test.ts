// The route table the HTTP server answers from: lookups (exact, a trailing parameter),
// 404 and 405 as typed errors, a route mounted beside the built-in ones over real HTTP,
// and the rule that every refusal in src/ is written by http-errors.ts alone.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, InvalidArgumentError, MethodNotAllowedError, RouteNotFoundError } from '../../src/core/errors.js';
import { sendJson } from '../../src/ingress/http-errors.js';
import { RouteTable } from '../../src/ingress/route-table.js';
import type { Route } from '../../src/ingress/route-table.js';
import { sqliteHarness } from '../harness/sqlite.js';
import { closeAll, openIngressMailroom, send, startIngress } from './ingress-kit.js';

const noop: Route['handle'] = () => undefined;
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
/** The one module allowed to choose an error status and write an error body. */
const HTTP_ERRORS = 'ingress/http-errors.ts';

describe('the route table', () => {
  const table = new RouteTable([
    { path: '/healthz', methods: ['GET', 'HEAD'], handle: noop },
    { path: '/hooks/:source', methods: ['POST'], handle: noop },
  ]);

  it('finds an exact path and a parameter route, decoding the parameter', () => {
    expect(table.match('GET', '/healthz').route.path).toBe('/healthz');
    expect(table.match('POST', '/hooks/stripe%20eu').params).toEqual({ source: 'stripe eu' });
    expect(table.match('POST', '/hooks/%E0%A4%A').params).toEqual({ source: '%E0%A4%A' });
  });

  it('refuses an unknown path with RouteNotFoundError and a wrong method with MethodNotAllowedError naming the allowed ones', () => {
    expect(() => table.match('GET', '/nowhere')).toThrow(RouteNotFoundError);
    expect(() => table.match('GET', '/hooks/stripe')).toThrow(MethodNotAllowedError);
    try {
      table.match('DELETE', '/healthz');
    } catch (error) {
      expect((error as MethodNotAllowedError).allowed).toEqual(['GET', 'HEAD']);
    }
  });

  it('refuses two routes on one path, and a parameter anywhere but at the end', () => {
    expect(() => new RouteTable([{ path: '/a', methods: ['GET'], handle: noop }, { path: '/a', methods: ['POST'], handle: noop }])).toThrow(ConfigError);
    expect(() => new RouteTable([{ path: '/a/:id/b', methods: ['GET'], handle: noop }])).toThrow(ConfigError);
  });
});

describe('routes mounted beside the built-in ones', () => {
  afterEach(() => closeAll(sqliteHarness));

  it('answers a mounted route, and answers its thrown typed error through http-errors', async () => {
    const { mr } = await openIngressMailroom(sqliteHarness);
    const mounted: Route[] = [
      { path: '/dashboard', methods: ['GET'], handle: (_req, res) => sendJson(res, 200, { page: 'dashboard' }) },
      {
        path: '/portal/:tenant',
        methods: ['GET'],
        handle: () => {
          throw new InvalidArgumentError('no such tenant');
        },
      },
    ];
    const { ingress, url } = await startIngress(mr, {}, { routes: mounted });
    expect(ingress.routes.paths).toEqual(['/healthz', '/readyz', '/metrics', '/dashboard', '/hooks/:source', '/portal/:tenant']);
    expect((await send(url, '/dashboard', { method: 'GET' })).json).toEqual({ page: 'dashboard' });
    const refused = await send(url, '/portal/acme', { method: 'GET' });
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({ error: { code: 'MR_ERR_INVALID_ARGUMENT', message: 'no such tenant' } });
  });
});

describe('one module writes every HTTP error', () => {
  it('finds no error status, error body or error code answer written outside ingress/http-errors.ts', () => {
    const handWritten = [
      /\bstatus:\s*[45]\d\d\b/, // an HttpError literal
      /writeHead\(\s*[45]\d\d/, // an error status written directly
      /statusCode\s*=\s*[45]\d\d/,
      /sendJson\([^,]+,\s*[45]\d\d/, // an error answered as if it were data
      /\{\s*error:\s*\{\s*code:/, // the error body shape
    ];
    const offenders: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const name = relative(SRC, file).split('\\').join('/');
      if (name === HTTP_ERRORS) continue;
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (handWritten.some((pattern) => pattern.test(line))) offenders.push(`src/${name}:${index + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}
