// `mr.endpoints`, `mr.messages` and `mr.deliveries`: the outgoing-webhook API over the
// store (SPEC §6a). An endpoint's secret is returned once, by `add` (and a new one by
// `rotateSecret`); nothing else here ever returns it. URLs pass the SSRF guard at add and
// update (and again at every send, in the deliver task).

import { assertKnownOptions, optionKeys } from '../core/known-options.js';
import { PORTAL_REASON } from '../core/disable-reasons.js';
import { EndpointDisabledError, EndpointHeldByOperatorError, EndpointNotFoundError, InvalidArgumentError, RotationInProgressError } from '../core/errors.js';
import { DELIVERY_STATUSES } from '../core/outgoing-types.js';
import type { Delivery, DeliveryStatus, Endpoint, EndpointAddedBy, EndpointHealth, EndpointRateLimit, Message } from '../core/outgoing-types.js';
import type { Logger } from '../log.js';
import type { JobInsert, Store } from '../store/store.js';
import { guardFor } from '../tasks/deliver/deliver-settings.js';
import type { DeliverSettings } from '../tasks/deliver/deliver-settings.js';
import { generateEndpointSecret } from './endpoint-secret.js';
import { checkEndpointUrl, checkEventTypes, checkMetadata, checkOptionalText, checkRateLimit, checkText } from './outgoing-input.js';

export interface EndpointAddOptions {
  /** The user's own customer id. */
  readonly tenant: string;
  /** http(s) URL of the customer's receiver; checked by the SSRF guard. */
  readonly url: string;
  readonly description?: string;
  /** Event types it receives. @default every type */
  readonly eventTypes?: readonly string[];
  /** At most `limit` deliveries started in any window of `intervalMs` to this endpoint. @default none */
  readonly rateLimit?: EndpointRateLimit;
  readonly metadata?: Record<string, unknown>;
}

export interface EndpointUpdateOptions {
  readonly url?: string;
  readonly description?: string | null;
  readonly eventTypes?: readonly string[] | null;
  readonly rateLimit?: EndpointRateLimit | null;
  readonly metadata?: Record<string, unknown> | null;
}

const ADD_KEYS = optionKeys<EndpointAddOptions>()({ tenant: true, url: true, description: true, eventTypes: true, rateLimit: true, metadata: true });
const UPDATE_KEYS = optionKeys<EndpointUpdateOptions>()({ url: true, description: true, eventTypes: true, rateLimit: true, metadata: true });

/** An endpoint as `add` returns it: with its signing secret, shown this once. */
export interface EndpointWithSecret extends Endpoint {
  /** `whsec_…`: give it to the customer now; Mailroom never shows it again. */
  readonly secret: string;
}

/** rotateSecret's answer: the new secret, shown this once, and until when the old one signs beside it. */
export interface RotatedSecret {
  readonly secret: string;
  readonly previousSecretUntil: Date;
}

export interface RecoverResult {
  readonly count: number;
  /** The deliveries sent again (each on its deliver job, replayed, or a new one when that job is gone). */
  readonly deliveryIds: string[];
}

export interface DeliveryListOptions {
  readonly endpointId?: string;
  readonly messageId?: string;
  readonly status?: DeliveryStatus;
  readonly limit?: number;
  readonly after?: string;
}

/** A secret rotation keeps the old secret signing for a day unless told otherwise. */
export const DEFAULT_ROTATION_OVERLAP_MS = 24 * 3_600_000;
/** 30 days: long enough for any customer to swap secrets, and an end the stores can always write. */
export const MAX_ROTATION_OVERLAP_MS = 30 * 24 * 3_600_000;

/** What the API needs from the facade. */
export interface OutgoingDeps {
  readonly store: Store;
  readonly settings: DeliverSettings;
  readonly log: Logger;
  /** The deliver job template (the task's policy); the store fills in each job's payload. */
  readonly deliverJob: () => JobInsert;
  /** Register the built-in deliver task in this process (once). */
  readonly startDelivering: () => void;
  readonly wakeWorkers: () => void;
  readonly assertOpen: () => void;
}

export class EndpointsApi {
  constructor(private readonly deps: OutgoingDeps) {}

  /**
   * Add an endpoint for a tenant; returns it with its signing secret, shown this once.
   * @throws UrlBlockedError when the URL's host is, or resolves to, a refused address
   * @example const ep = await mr.endpoints.add({ tenant: 'acme', url: 'https://acme.example/hooks', eventTypes: ['invoice.paid'] });
   */
  async add(options: EndpointAddOptions): Promise<EndpointWithSecret> {
    return this.addAs(options, 'operator');
  }

  /**
   * The tenant portal's add: as `add`, but the endpoint is the tenant's (`addedBy:
   * 'tenant'`), so its URL answers to `endpoints.tenantAllowlist`, at add and at every
   * send, and never to the operator's `allowlist`.
   */
  async addByTenant(options: EndpointAddOptions): Promise<EndpointWithSecret> {
    return this.addAs(options, 'tenant');
  }

  private async addAs(options: EndpointAddOptions, addedBy: EndpointAddedBy): Promise<EndpointWithSecret> {
    this.deps.assertOpen();
    if (typeof options !== 'object' || options === null) throw new InvalidArgumentError('endpoints.add takes { tenant, url, … }');
    assertKnownOptions(options, ADD_KEYS, 'endpoints.add');
    // The checks that need no network first: a bad option is refused without a DNS lookup.
    const checked = {
      tenant: checkText(options.tenant, 'tenant'),
      description: checkOptionalText(options.description, 'description'),
      eventTypes: checkEventTypes(options.eventTypes),
      rateLimit: checkRateLimit(options.rateLimit),
      metadata: checkMetadata(options.metadata),
    };
    const url = await checkEndpointUrl(options.url, guardFor(this.deps.settings, addedBy));
    if (addedBy === 'tenant') await this.refuseOperatorDisabledUrl(checked.tenant, url);
    const secret = generateEndpointSecret();
    const endpoint = await this.deps.store.endpointAdd({ ...checked, url, secret, addedBy });
    this.deps.log.info({ endpointId: endpoint.id, tenant: endpoint.tenant, addedBy }, 'endpoint added');
    this.deps.startDelivering();
    return { ...endpoint, secret };
  }

  /**
   * A tenant may not add again a URL of theirs that the operator disabled: a second
   * endpoint at the same URL would undo the operator's disable from the portal.
   */
  private async refuseOperatorDisabledUrl(tenant: string, url: string): Promise<void> {
    for (let after: string | undefined; ; ) {
      const page = await this.deps.store.endpointList({ tenant, limit: 1_000, ...(after !== undefined ? { after } : {}) });
      const held = page.find((endpoint) => endpoint.url === url && !endpoint.enabled && endpoint.disabledBy === 'operator');
      if (held) throw new EndpointHeldByOperatorError(held.id, true);
      if (page.length < 1_000) return;
      after = page[page.length - 1]!.id;
    }
  }

  /** Endpoints (without secrets), of one tenant or all, in id order. */
  async list(options: { tenant?: string; limit?: number; after?: string } = {}): Promise<Endpoint[]> {
    this.deps.assertOpen();
    return this.deps.store.endpointList(options);
  }

  /** One endpoint (without its secret), or null. */
  async get(id: string): Promise<Endpoint | null> {
    this.deps.assertOpen();
    return this.deps.store.endpointGet({ id: String(id) });
  }

  /** Change an endpoint's URL (checked again by the SSRF guard), filter, description, rate or metadata. */
  async update(id: string, changes: EndpointUpdateOptions): Promise<Endpoint> {
    this.deps.assertOpen();
    assertKnownOptions(changes, UPDATE_KEYS, 'endpoints.update');
    // A new URL answers to the allowlist of whoever added the endpoint.
    const current = changes.url === undefined ? null : found(await this.deps.store.endpointGet({ id: String(id) }), id);
    const updated = await this.deps.store.endpointUpdate({
      id: String(id),
      ...(current !== null ? { url: await checkEndpointUrl(changes.url, guardFor(this.deps.settings, current.addedBy)) } : {}),
      ...(changes.description !== undefined ? { description: checkOptionalText(changes.description, 'description') } : {}),
      ...(changes.eventTypes !== undefined ? { eventTypes: checkEventTypes(changes.eventTypes) } : {}),
      ...(changes.rateLimit !== undefined ? { rateLimit: checkRateLimit(changes.rateLimit) } : {}),
      ...(changes.metadata !== undefined ? { metadata: checkMetadata(changes.metadata) } : {}),
    });
    return found(updated, id);
  }

  /**
   * Stop delivering to an endpoint; messages published meanwhile are recorded `skipped`.
   * Without a reason: "disabled by hand", or, when it is disabled already, the reason it
   * has. Either way the operator now holds it disabled (`disabledBy: 'operator'`): the
   * tenant portal cannot enable it.
   */
  async disable(id: string, reason?: string): Promise<Endpoint> {
    this.deps.assertOpen();
    // Disabled already: without a new reason it keeps the one it has (a 410, the failure
    // streak, the tenant's, an operator's words) rather than a generic one. The store
    // decides that in the write, so a tenant's enable in between cannot leave its words behind.
    const endpoint = found(
      await this.deps.store.endpointSetEnabled({
        id: String(id),
        enabled: false,
        reason: reason === undefined ? 'disabled by hand' : checkText(reason, 'reason'),
        keepReason: reason === undefined,
        by: 'operator',
      }),
      id,
    );
    this.deps.log.info({ endpointId: endpoint.id, reason: endpoint.disabledReason }, 'endpoint disabled');
    return endpoint;
  }

  /** Deliver to an endpoint again (what was skipped meanwhile stays so until `recover`). */
  async enable(id: string): Promise<Endpoint> {
    this.deps.assertOpen();
    const endpoint = found(await this.deps.store.endpointSetEnabled({ id: String(id), enabled: true, reason: null }), id);
    this.deps.log.info({ endpointId: endpoint.id }, 'endpoint enabled');
    return endpoint;
  }

  /**
   * The tenant portal's switch: disables an enabled endpoint (`disabledBy: 'tenant'`), or
   * enables one that the tenant or its deliveries disabled. An endpoint the operator
   * disabled stays so (EndpointHeldByOperatorError); one already as asked is returned as it is.
   */
  async setEnabledByTenant(id: string, enabled: boolean): Promise<Endpoint> {
    this.deps.assertOpen();
    const changed = await this.deps.store.endpointSetEnabled({ id: String(id), enabled, reason: enabled ? null : PORTAL_REASON, by: 'tenant' });
    if (changed) {
      this.deps.log.info({ endpointId: changed.id, by: 'portal' }, enabled ? 'endpoint enabled' : 'endpoint disabled');
      return changed;
    }
    const current = found(await this.deps.store.endpointGet({ id: String(id) }), id);
    if (enabled && !current.enabled && current.disabledBy === 'operator') throw new EndpointHeldByOperatorError(current.id);
    return current;
  }

  /** Delete an endpoint; its deliveries stay as history, and pending ones are skipped. */
  async remove(id: string): Promise<void> {
    this.deps.assertOpen();
    if (!(await this.deps.store.endpointRemove({ id: String(id) }))) throw new EndpointNotFoundError(String(id));
    this.deps.log.info({ endpointId: String(id) }, 'endpoint removed');
  }

  /**
   * A new signing secret, returned this once; the old one keeps signing beside it for
   * `overlapMs` (both signatures in `webhook-signature`), so the customer can switch without
   * missing a delivery. `overlapMs: 0` stops every earlier secret at once (a leaked one).
   * @throws RotationInProgressError while an earlier rotation's old secret still signs
   *   (unless `overlapMs` is 0): rotating again would drop that secret at once
   */
  async rotateSecret(id: string, options: { overlapMs?: number } = {}): Promise<RotatedSecret> {
    this.deps.assertOpen();
    const overlapMs = options.overlapMs ?? DEFAULT_ROTATION_OVERLAP_MS;
    if (typeof overlapMs !== 'number' || !Number.isFinite(overlapMs) || overlapMs < 0 || overlapMs > MAX_ROTATION_OVERLAP_MS) {
      throw new InvalidArgumentError(`overlapMs must be a number from 0 to ${MAX_ROTATION_OVERLAP_MS} (30 days)`);
    }
    const secret = generateEndpointSecret();
    const rotation = found(await this.deps.store.endpointRotateSecret({ id: String(id), secret, overlapMs }), id);
    if (!rotation.rotated) throw new RotationInProgressError(String(id), rotation.overlapUntil);
    this.deps.log.info({ endpointId: String(id), overlapMs }, 'endpoint secret rotated');
    return { secret, previousSecretUntil: rotation.previousUntil };
  }

  /**
   * Send an endpoint's failed and skipped deliveries since a time again, each on its deliver
   * job replayed (its history kept) or a new one, with a fresh budget (after the customer
   * fixed their receiver and the endpoint is enabled).
   * @throws EndpointDisabledError while it is disabled
   */
  async recover(id: string, options: { since: Date }): Promise<RecoverResult> {
    this.deps.assertOpen();
    if (!(options?.since instanceof Date) || Number.isNaN(options.since.getTime())) throw new InvalidArgumentError('recover needs { since: Date }');
    const endpoint = found(await this.deps.store.endpointGet({ id: String(id) }), id);
    if (!endpoint.enabled) throw new EndpointDisabledError(endpoint.id, 'recover its deliveries');
    const deliveryIds = await this.deps.store.deliveryRecover({ endpointId: endpoint.id, since: options.since, job: this.deps.deliverJob() });
    if (deliveryIds.length > 0) {
      this.deps.log.info({ endpointId: endpoint.id, count: deliveryIds.length, since: options.since.toISOString() }, 'deliveries recovered');
      this.deps.wakeWorkers();
    }
    return { count: deliveryIds.length, deliveryIds };
  }

  /** Success rate, last success and failure, breaker state and backlog of one endpoint. */
  async health(id: string): Promise<EndpointHealth> {
    this.deps.assertOpen();
    return found(await this.deps.store.endpointHealth({ id: String(id), breaker: this.deps.settings.breaker }), id);
  }
}

export class MessagesApi {
  constructor(private readonly deps: Pick<OutgoingDeps, 'store' | 'assertOpen'>) {}

  /** Published messages in id order, of one tenant and/or type. */
  async list(options: { tenant?: string; type?: string; limit?: number; after?: string } = {}): Promise<Message[]> {
    this.deps.assertOpen();
    return this.deps.store.messageList(options);
  }

  /** One message, or null (its id is the `webhook-id` its endpoints received). */
  async get(id: string): Promise<Message | null> {
    this.deps.assertOpen();
    return this.deps.store.messageGet({ id: String(id) });
  }
}

export class DeliveriesApi {
  constructor(private readonly deps: Pick<OutgoingDeps, 'store' | 'assertOpen'>) {}

  /** One endpoint's or one message's deliveries in id order, optionally of one status. */
  async list(options: DeliveryListOptions): Promise<Delivery[]> {
    this.deps.assertOpen();
    if ((options?.endpointId === undefined) === (options?.messageId === undefined)) {
      throw new InvalidArgumentError('deliveries.list takes one of { endpointId } or { messageId }');
    }
    if (options.status !== undefined && !DELIVERY_STATUSES.includes(options.status)) {
      throw new InvalidArgumentError(`status must be one of ${DELIVERY_STATUSES.join(', ')}`);
    }
    return this.deps.store.deliveryList({ ...options, endpointId: optionalId(options.endpointId), messageId: optionalId(options.messageId) });
  }
}

function found<T>(value: T | null, id: string): T {
  if (value === null) throw new EndpointNotFoundError(String(id));
  return value;
}

function optionalId(id: string | undefined): string | undefined {
  return id === undefined ? undefined : String(id);
}
