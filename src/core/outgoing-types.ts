// The shapes of outgoing webhooks (SPEC §6a) every layer shares: endpoints, messages,
// deliveries and an endpoint's health. Plain data, no I/O. No shape here carries a
// signing secret: the secret leaves the store only for the deliver task (DeliveryStart).

/** N deliveries per interval to one endpoint. */
export interface EndpointRateLimit {
  readonly limit: number;
  readonly intervalMs: number;
}

/** Who added an endpoint (Endpoint.addedBy). */
export type EndpointAddedBy = 'operator' | 'tenant';
/** Who disabled an endpoint (Endpoint.disabledBy). */
export type EndpointDisabledBy = 'operator' | 'tenant' | 'deliveries';

export interface Endpoint {
  /** Decimal string of an increasing integer. */
  readonly id: string;
  /** The user's own customer id. */
  readonly tenant: string;
  readonly url: string;
  readonly description: string | null;
  /** Event types it receives; null receives every type. */
  readonly eventTypes: readonly string[] | null;
  readonly enabled: boolean;
  /** Why it was disabled (by hand, a 410, or a failure streak); null while enabled. */
  readonly disabledReason: string | null;
  /** Who disabled it: the operator (API, CLI, dashboard), the tenant (portal) or its deliveries (a 410, a failure streak); null while enabled. */
  readonly disabledBy: EndpointDisabledBy | null;
  /**
   * Who added it: the operator (API, CLI) or the tenant (portal). A tenant's endpoint gets
   * `endpoints.tenantAllowlist`, not the operator's `allowlist`.
   */
  readonly addedBy: EndpointAddedBy;
  readonly rateLimit: EndpointRateLimit | null;
  readonly metadata: Record<string, unknown> | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export interface Message<P = unknown> {
  /** Decimal string; also the `webhook-id` every endpoint receives it under, on every attempt. */
  readonly id: string;
  readonly tenant: string;
  readonly type: string;
  readonly payload: P;
  readonly key: string | null;
  readonly createdAt: Date;
}

/**
 * Where one message stands at one endpoint. `pending` waits or is being retried;
 * `delivered` got a 2xx; `failed` ran out of attempts or was refused for good; `skipped`
 * was not sent because the endpoint was disabled (recoverable with `endpoints.recover`).
 */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'skipped';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'failed', 'skipped'];

export interface Delivery {
  readonly id: string;
  readonly messageId: string;
  readonly endpointId: string;
  readonly tenant: string;
  readonly type: string;
  readonly status: DeliveryStatus;
  /** The deliver job (its attempts, with status, duration and a response excerpt, are in `getJob`); null when skipped. */
  readonly jobId: string | null;
  /** Charged attempts of that job. */
  readonly attempts: number;
  readonly lastError: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface EndpointHealth {
  readonly endpointId: string;
  /** Successful attempts / all attempts since the endpoint was added; null before the first. */
  readonly successRate: number | null;
  readonly successes: number;
  readonly failures: number;
  readonly lastSuccessAt: Date | null;
  readonly lastFailureAt: Date | null;
  /** First failure since the last success; auto-disable measures the streak from it. */
  readonly failingSince: Date | null;
  readonly breakerState: BreakerState;
  /** While open: when the next probe may go. */
  readonly breakerRetryAt: Date | null;
  /** Deliveries waiting to be sent (pending). */
  readonly backlog: number;
}

/** Whether an endpoint with this filter receives a message of this type. */
export function endpointReceives(eventTypes: readonly string[] | null, type: string): boolean {
  return eventTypes === null || eventTypes.includes(type);
}
