// The budget for client assets: everything the dashboard's pages load is served
// by the server itself (no CDN) and, stylesheet, script and icon together, weighs under 200 KB.
// The assets are files of the package, the same on either store: one store is enough.

import { afterEach, describe, expect, it } from 'vitest';
import { closeTestMailrooms } from '../harness/mailroom.js';
import { sqliteHarness } from '../harness/sqlite.js';
import { send } from '../ingress/ingress-kit.js';
import { TOKEN, withDashboard } from './dashboard-kit.js';

/** Issue 16, "Built to last": "Total client assets under 200 KB". */
const ASSET_BUDGET_BYTES = 200 * 1024;

describe('dashboard assets', () => {
  afterEach(async () => closeTestMailrooms(sqliteHarness));

  it('loads only local stylesheets, scripts and its icon, together under 200 KB as served', () =>
    withDashboard(sqliteHarness, async (d) => {
      const bearer = { authorization: `Bearer ${TOKEN}`, accept: 'text/html' };
      const pages = ['/dashboard/login', '/dashboard', '/dashboard/jobs', `/dashboard/jobs/${d.deadJobId}`, '/dashboard/events', '/dashboard/endpoints'];
      const assets = new Set<string>();
      for (const path of pages) {
        const page = await send(d.url, path, { method: 'GET', headers: bearer });
        expect(page.status, path).toBe(200);
        const loaded = [...page.text.matchAll(/<(?:link[^>]*\shref|script[^>]*\ssrc|img[^>]*\ssrc)="([^"]+)"/g)].map((m) => m[1]!);
        expect(loaded.length, path).toBeGreaterThan(0);
        for (const url of loaded) {
          expect(url, `${path} loads ${url}`).toMatch(/^\/dashboard\/assets\/[\w.-]+$/);
          assets.add(url);
        }
      }
      // The tab's icon is named by every page: without it browsers ask for /favicon.ico,
      // get a 404 and log it on every page.
      expect([...assets].sort()).toEqual(['/dashboard/assets/dashboard.css', '/dashboard/assets/dashboard.js', '/dashboard/assets/icon.svg']);
      let totalBytes = 0;
      for (const url of assets) {
        const asset = await send(d.url, url, { method: 'GET', headers: {} });
        expect(asset.status, url).toBe(200);
        const type = url.endsWith('.css') ? /^text\/css/ : url.endsWith('.svg') ? /^image\/svg\+xml/ : /^text\/javascript/;
        expect(asset.headers['content-type'], url).toMatch(type);
        const bytes = Buffer.byteLength(asset.text);
        expect(Number(asset.headers['content-length']), url).toBe(bytes);
        expect(bytes, url).toBeGreaterThan(0);
        totalBytes += bytes;
      }
      expect(totalBytes).toBeLessThan(ASSET_BUDGET_BYTES);
    }));
});
