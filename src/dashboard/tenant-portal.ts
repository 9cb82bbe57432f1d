// The seam for the tenant portal (SPEC §9a, issue 16 part 5): `mr.portal.link(tenant)`
// signed links that show one tenant its own endpoints, deliveries and attempts. It needs
// outgoing webhooks (endpoints and deliveries, issue 15), which have not landed, so it
// mounts no route yet. When they land, its routes go here, under /portal/ rather than
// /dashboard/: a portal link must never reach an operator page, and a separate prefix
// keeps the dashboard's session cookie (Path=/dashboard) out of portal requests.

import type { Route } from '../ingress/route-table.js';

/** The tenant portal's routes: none until outgoing webhooks (issue 15) land. */
export function tenantPortalRoutes(): Route[] {
  return [];
}
