// The static files of the package the dashboard's and the portal's pages load (one
// stylesheet, one script, the tab's icon), read once and served under each surface's own prefix, so a
// portal page never needs a path under /dashboard. No data, so no credentials asked.

import { readFileSync } from 'node:fs';
import { RouteNotFoundError } from '../core/errors.js';
import { httpErrorFromError, sendHttpError } from '../ingress/http-errors.js';
import type { Route } from '../ingress/route-table.js';

const ASSETS: Readonly<Record<string, { readonly type: string; readonly body: Buffer }>> = {
  'dashboard.css': { type: 'text/css; charset=utf-8', body: readAsset('dashboard.css') },
  'dashboard.js': { type: 'text/javascript; charset=utf-8', body: readAsset('dashboard.js') },
  'icon.svg': { type: 'image/svg+xml', body: readAsset('icon.svg') },
};

/** GET `${base}/assets/:name` for the files above; any other name is a 404. */
export function assetRoute(base: string): Route {
  return {
    path: `${base}/assets/:name`,
    methods: ['GET', 'HEAD'],
    handle(_req, res, params) {
      const asset = Object.prototype.hasOwnProperty.call(ASSETS, params.name!) ? ASSETS[params.name!]! : null;
      if (asset === null) {
        sendHttpError(res, httpErrorFromError(new RouteNotFoundError(`${base}/assets/${params.name}`)));
        return;
      }
      res.writeHead(200, {
        'content-type': asset.type,
        'content-length': asset.body.length,
        'cache-control': 'public, max-age=300',
        'x-content-type-options': 'nosniff',
      });
      res.end(asset.body);
    },
  };
}

function readAsset(name: string): Buffer {
  return readFileSync(new URL(`./assets/${name}`, import.meta.url));
}
