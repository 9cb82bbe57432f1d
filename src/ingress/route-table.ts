// The routes one HTTP server answers, as data: each route is a path (exact, or a prefix
// ending in one `:param`) and the methods it takes. The server looks a request up here; a
// path nobody serves and a method a route does not take become typed errors, which
// http-errors.ts turns into the 404 and 405 answers. New surfaces (the dashboard, the
// tenant portal) mount by adding routes, not by editing a switch.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { ConfigError, MethodNotAllowedError, RouteNotFoundError } from '../core/errors.js';

/** One route: what it answers and how. */
export interface Route {
  /** An exact path (`/healthz`) or a prefix ending in one parameter (`/hooks/:source`), which takes the rest of the path. */
  readonly path: string;
  /** Methods it answers; any other is refused with 405 and an `Allow` header. */
  readonly methods: readonly string[];
  /** Answer the request; a thrown error is answered through http-errors.ts. */
  handle(req: IncomingMessage, res: ServerResponse, params: Readonly<Record<string, string>>): Promise<void> | void;
}

/** A route and the parameters its path captured. */
export interface RouteMatch {
  readonly route: Route;
  readonly params: Readonly<Record<string, string>>;
}

interface PrefixRoute {
  readonly prefix: string;
  readonly param: string;
  readonly route: Route;
}

const PARAM_ROUTE = /^(\/(?:[^:]*\/)?):([A-Za-z_][A-Za-z0-9_]*)$/;
const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});

/**
 * The lookup over a list of routes: an exact path first, then the prefixes in the order given.
 * @example
 * const table = new RouteTable([{ path: '/healthz', methods: ['GET', 'HEAD'], handle: (req, res) => sendJson(res, 200, { status: 'ok' }) }]);
 * const { route, params } = table.match(req.method, '/healthz');
 */
export class RouteTable {
  private readonly exact = new Map<string, Route>();
  private readonly prefixes: PrefixRoute[] = [];

  /** @throws ConfigError when two routes claim the same path, or a path has a parameter anywhere but at its end. */
  constructor(routes: readonly Route[]) {
    const seen = new Set<string>();
    for (const route of routes) {
      if (seen.has(route.path)) throw new ConfigError('routes', `two routes serve ${route.path}`);
      seen.add(route.path);
      const param = PARAM_ROUTE.exec(route.path);
      if (param) this.prefixes.push({ prefix: param[1]!, param: param[2]!, route });
      else if (route.path.includes(':')) throw new ConfigError('routes', `${route.path}: a parameter may only end a path`);
      else this.exact.set(route.path, route);
    }
  }

  /** Paths served, in the order they are looked up (for logs and tests). */
  get paths(): string[] {
    return [...this.exact.keys(), ...this.prefixes.map((entry) => entry.route.path)];
  }

  /**
   * The route for `method` and `path` (no query string), with its decoded parameter.
   * @throws RouteNotFoundError when no route serves the path; MethodNotAllowedError when its route does not take the method.
   */
  match(method: string | undefined, path: string): RouteMatch {
    let route = this.exact.get(path);
    let params = NO_PARAMS;
    if (route === undefined) {
      const entry = this.prefixes.find((candidate) => path.startsWith(candidate.prefix));
      if (entry === undefined) throw new RouteNotFoundError(path.slice(0, 200));
      route = entry.route;
      params = { [entry.param]: decodeParam(path.slice(entry.prefix.length)) };
    }
    if (!route.methods.includes(method ?? '')) throw new MethodNotAllowedError(method ?? '?', [...route.methods]);
    return { route, params };
  }
}

/** A percent-encoded segment decoded, or as sent when it does not decode. */
function decodeParam(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
