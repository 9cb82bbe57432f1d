// The knobs of outgoing deliveries (`endpoints` in Mailroom.open and the config file),
// resolved once with their defaults and checked, so a bad value fails at open, not at the
// first delivery.

import { DEFAULT_BREAKER_SETTINGS } from '../../core/circuit-breaker.js';
import type { BreakerSettings } from '../../core/circuit-breaker.js';
import { STANDARD_WEBHOOKS_SCHEDULE_MS } from '../../core/backoff.js';
import { ConfigError, InvalidArgumentError } from '../../core/errors.js';
import { validateEndpoints } from '../../config/endpoints-config.js';
import type { EndpointAddedBy } from '../../core/outgoing-types.js';
import type { RateLimit } from '../../store/limits.js';
import type { Resolve } from './ssrf-guard.js';
import { SsrfGuard } from './ssrf-guard.js';

export interface EndpointsOptions {
  /**
   * Hosts, addresses and CIDR ranges deliveries may reach although the SSRF guard refuses
   * them (loopback, private, …): your own trusted targets. @default []
   */
  readonly allowlist?: readonly string[];
  /**
   * The same for endpoints a tenant added through the portal, which `allowlist` does not
   * reach: a tenant must not point deliveries at the internal targets you trust. @default []
   */
  readonly tenantAllowlist?: readonly string[];
  /** @default 5000 */
  readonly connectTimeoutMs?: number;
  /** The whole request, connect to the last byte read. @default 30000 */
  readonly requestTimeoutMs?: number;
  /** The most of an answer read (the attempt keeps an excerpt). @default 65536 */
  readonly maxResponseBytes?: number;
  /** Deliveries in flight to one endpoint, across every worker. @default 10 */
  readonly concurrency?: number;
  /** Deliveries started per interval to one endpoint, across every worker. @default none */
  readonly rate?: RateLimit;
  /** Attempts per delivery. @default 8 (now and the Standard Webhooks schedule: about a day) */
  readonly maxAttempts?: number;
  /** Delays after each failed attempt. @default the Standard Webhooks schedule (5 s … 10 h, ±20 %) */
  readonly retryScheduleMs?: readonly number[];
  /** The circuit breaker per endpoint (core/circuit-breaker.ts). */
  readonly breaker?: Partial<BreakerSettings>;
  /** Disable an endpoint that has failed for this long without one success. @default 5 days */
  readonly disableAfterMs?: number;
  /** The queue deliver jobs go to. @default 'default' */
  readonly queue?: string;
  /**
   * Run the built-in `deliver` task in this process's workers. By default it starts when the
   * store holds an endpoint at open, or when this process adds one or publishes (`mailroom
   * serve` always runs it). @default 'auto'
   */
  readonly deliver?: boolean | 'auto';
  /** Tests: how host names resolve (the SSRF guard checks what this returns). */
  readonly resolve?: Resolve;
  /** Tests: the clock the breaker and auto-disable read (the store's otherwise). */
  readonly clock?: () => Date;
}

export interface DeliverSettings {
  /** The guard of the operator's endpoints (`allowlist`). */
  readonly guard: SsrfGuard;
  /** The guard of endpoints a tenant added (`tenantAllowlist`). */
  readonly tenantGuard: SsrfGuard;
  readonly connectTimeoutMs: number;
  readonly requestTimeoutMs: number;
  readonly maxResponseBytes: number;
  readonly concurrency: number;
  readonly rate: RateLimit | undefined;
  readonly maxAttempts: number;
  readonly retryScheduleMs: readonly number[];
  readonly breaker: BreakerSettings;
  readonly disableAfterMs: number;
  readonly queue: string | undefined;
  readonly clock: (() => Date) | undefined;
}

/** 5 days without a success: a customer's long weekend and then some, as Svix and Stripe do. */
export const DEFAULT_DISABLE_AFTER_MS = 5 * 24 * 3_600_000;
/** 10 in flight per endpoint: enough for a healthy receiver, never a flood for a slow one. */
export const DEFAULT_ENDPOINT_CONCURRENCY = 10;

/**
 * Mailroom.open's `endpoints` checked (the config file's own check: every key known, each
 * value in range) and filled in with the defaults.
 * @throws InvalidArgumentError naming the bad key.
 */
export function resolveDeliverSettings(raw: EndpointsOptions = {}): DeliverSettings {
  let options: EndpointsOptions;
  try {
    options = validateEndpoints(raw, 'endpoints', { hooks: true });
  } catch (error) {
    // An argument of Mailroom.open, not a config file: the code callers match on for those.
    if (error instanceof ConfigError) throw new InvalidArgumentError(error.message);
    throw error;
  }
  return {
    guard: new SsrfGuard({ allowlist: options.allowlist ?? [], resolve: options.resolve }),
    tenantGuard: new SsrfGuard({ allowlist: options.tenantAllowlist ?? [], allowlistKey: 'endpoints.tenantAllowlist', resolve: options.resolve }),
    connectTimeoutMs: options.connectTimeoutMs ?? 5_000,
    requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    maxResponseBytes: options.maxResponseBytes ?? 64 * 1024,
    concurrency: options.concurrency ?? DEFAULT_ENDPOINT_CONCURRENCY,
    rate: options.rate,
    maxAttempts: options.maxAttempts ?? STANDARD_WEBHOOKS_SCHEDULE_MS.length + 1,
    retryScheduleMs: options.retryScheduleMs ?? STANDARD_WEBHOOKS_SCHEDULE_MS,
    breaker: { ...DEFAULT_BREAKER_SETTINGS, ...options.breaker },
    disableAfterMs: options.disableAfterMs ?? DEFAULT_DISABLE_AFTER_MS,
    queue: options.queue,
    clock: options.clock,
  };
}

/** The SSRF guard an endpoint's URL answers to: its adder's allowlist. */
export function guardFor(settings: Pick<DeliverSettings, 'guard' | 'tenantGuard'>, addedBy: EndpointAddedBy): SsrfGuard {
  return addedBy === 'tenant' ? settings.tenantGuard : settings.guard;
}
