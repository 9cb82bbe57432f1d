// The reasons Mailroom itself writes when it disables an endpoint, and who a reason says
// disabled it. The tenant portal lets a tenant enable again what they or the deliveries
// disabled (their own switch, a 410 from their receiver, a failure streak), never what
// the operator disabled: that reason is the operator's word, for the operator's reasons,
// and the portal shows it to the tenant only as "disabled by your provider".

import type { Endpoint } from './outgoing-types.js';

/** A 410 answer disabled the endpoint (the deliver task). */
export const GONE_REASON = 'the endpoint answered 410 Gone';
/** The tenant disabled it in the portal. */
export const PORTAL_REASON = 'disabled by the tenant in the portal';
/** What the portal shows a tenant in place of an operator's reason. */
export const OPERATOR_REASON_FOR_TENANT = 'disabled by your provider';
const STREAK_PREFIX = 'failing without a success since ';

/** The reason an endpoint is disabled after a failure streak. */
export function streakReason(failingSinceMs: number): string {
  return `${STREAK_PREFIX}${new Date(failingSinceMs).toISOString()}`;
}

/** Who disabled an endpoint: the tenant (portal), its deliveries (410, failure streak), or the operator (API, CLI, dashboard); null while enabled. */
export function disabledBy(endpoint: Pick<Endpoint, 'enabled' | 'disabledReason'>): 'tenant' | 'deliveries' | 'operator' | null {
  if (endpoint.enabled) return null;
  const reason = endpoint.disabledReason ?? '';
  if (reason === PORTAL_REASON) return 'tenant';
  if (reason === GONE_REASON || (reason.startsWith(STREAK_PREFIX) && !Number.isNaN(Date.parse(reason.slice(STREAK_PREFIX.length))))) return 'deliveries';
  return 'operator';
}

/** An endpoint as a tenant sees it: an operator's reason replaced by OPERATOR_REASON_FOR_TENANT. */
export function endpointForTenant<E extends Pick<Endpoint, 'enabled' | 'disabledReason'>>(endpoint: E): E {
  return disabledBy(endpoint) === 'operator' ? { ...endpoint, disabledReason: OPERATOR_REASON_FOR_TENANT } : endpoint;
}
