// The reasons Mailroom itself writes when it disables an endpoint, and how the portal
// shows a disable to the tenant. Who disabled an endpoint is stored beside the reason
// (`disabledBy`, migration 0017): the portal lets a tenant enable again what they or the
// deliveries disabled (their own switch, a 410 from their receiver, a failure streak),
// never what the operator disabled. The operator's reason is the operator's word, for the
// operator's reasons: the portal shows it to the tenant only as "disabled by your provider".

import type { Endpoint } from './outgoing-types.js';

/** A 410 answer disabled the endpoint (the deliver task). */
export const GONE_REASON = 'the endpoint answered 410 Gone';
/** The tenant disabled it in the portal. */
export const PORTAL_REASON = 'disabled by the tenant in the portal';
/** What the portal shows a tenant in place of an operator's reason. */
export const OPERATOR_REASON_FOR_TENANT = 'disabled by your provider';
/** Migration 0017 classifies earlier disables by this prefix too: keep them in step. */
const STREAK_PREFIX = 'failing without a success since ';

/** The reason an endpoint is disabled after a failure streak. */
export function streakReason(failingSinceMs: number): string {
  return `${STREAK_PREFIX}${new Date(failingSinceMs).toISOString()}`;
}

/** An endpoint as a tenant sees it: an operator's reason replaced by OPERATOR_REASON_FOR_TENANT. */
export function endpointForTenant<E extends Pick<Endpoint, 'disabledBy' | 'disabledReason'>>(endpoint: E): E {
  return endpoint.disabledBy === 'operator' ? { ...endpoint, disabledReason: OPERATOR_REASON_FOR_TENANT } : endpoint;
}
