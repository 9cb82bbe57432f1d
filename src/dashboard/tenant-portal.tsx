// The tenant portal (SPEC §9a): what a signed link from `mr.portal.link(tenant)` opens. A
// link is traded once at /portal/enter/<token> for a session cookie (Path=/portal, HttpOnly,
// SameSite=Lax) that names the tenant and ends when the link does; a browser signed in as
// another tenant is asked first, and only a POST of that current session switches it. Every
// page and action then acts for that tenant only: an endpoint or delivery of another tenant
// answers exactly as one that does not exist (404), and no route here reaches an operator
// page; the dashboard's own cookie (Path=/dashboard) never even reaches these requests.
// Every POST needs the session's CSRF token and a same-origin request.

import type { VNode } from 'preact';
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CsrfError,
  EndpointHeldByOperatorError,
  EndpointNotFoundError,
  InvalidArgumentError,
  JobStateError,
  MailroomError,
  RotationInProgressError,
  RouteNotFoundError,
  UnauthorizedError,
  UrlBlockedError,
} from '../core/errors.js';
import { endpointForTenant } from '../core/disable-reasons.js';
import { displayTime } from '../core/display-text.js';
import type { Endpoint } from '../core/outgoing-types.js';
import { sendJson } from '../ingress/http-errors.js';
import type { Route } from '../ingress/route-table.js';
import type { Logger } from '../log.js';
import type { Mailroom } from '../mailroom.js';
import type { PortalGrant, PortalSession, PortalSigner } from '../portal/portal-signer.js';
import { assetRoute } from './asset-route.js';
import { SubmittedOnce } from './submitted-once.js';
import { endpointRowsPage, healthOf } from './endpoint-rows.js';
import { idCursor, optionalField, parseTime, requiredField } from './form-fields.js';
import { cookiesOf } from './dashboard-auth.js';
import { assertSameOrigin, cookie, readForm, redirect, sendError, sendView, wantsHtml } from './dashboard-http.js';
import { PORTAL_BASE, portalHref, PortalDeliveryPage, PortalEndpointPage, PortalErrorPage, PortalHomePage, PortalSecretPage, PortalSwitchPage } from './views/portal.js';
import type { AddAttempt } from './views/portal.js';

/** The portal session cookie; its path keeps it to /portal. */
export const PORTAL_COOKIE = 'mailroom_portal';
/** Rows on a list page. */
const PAGE_SIZE = 50;
/** The longest value a portal form or query may carry (a URL, a description, a list of event types). */
const MAX_FIELD_CHARS = 2_000;
/** A refused link or session says only this: never whether it expired, was altered or was never ours. */
const LINK_REFUSED = 'This portal link is invalid or has expired. Ask for a new link.';
/** Notices by the code an action's redirect carries: the page never echoes free text. */
const NOTICES: Readonly<Record<string, string>> = {
  disabled: 'Disabled: nothing is sent to this endpoint until you enable it again.',
  enabled: 'Enabled: new events are sent to this endpoint again.',
  resent: 'Re-sent: the delivery is in line again and is attempted shortly.',
  'already-added': 'This endpoint was added when the form was first sent; sending it again added nothing. Its signing secret was shown on that first answer only.',
};
/** The recover form proposes what failed or was skipped in the last day. */
const RECOVER_DEFAULT_MS = 24 * 3_600_000;

export interface TenantPortalOptions {
  readonly mr: Mailroom;
  /** @default mr.log */
  readonly log?: Logger;
  /** The clock links and sessions are judged by (tests). @default Date.now */
  readonly now?: () => number;
}

interface PortalRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly query: URLSearchParams;
  readonly params: Readonly<Record<string, string>>;
  readonly session: PortalSession;
  readonly startedAt: number;
}

/** The portal's routes, or none when no portal secret is configured (`portal.secret`). */
export function tenantPortalRoutes(options: TenantPortalOptions): Route[] {
  const { mr } = options;
  if (mr.portal.signer === null) return [];
  const signer: PortalSigner = mr.portal.signer;
  const log = options.log ?? mr.log;
  const now = options.now ?? Date.now;
  /** Add-endpoint forms already answered: a refresh of the secret's page adds no second endpoint. */
  const addForms = new SubmittedOnce({ now });

  /** A route that runs only for a valid portal session, and for a POST only for a genuine form of it. */
  const guarded = (path: string, methods: readonly string[], handler: (request: PortalRequest) => Promise<void>): Route => ({
    path,
    methods,
    async handle(req, res, params) {
      const startedAt = performance.now();
      let session: PortalSession | null = null;
      try {
        session = signer.sessionOf(cookiesOf(req)[PORTAL_COOKIE], now());
        if (session === null) throw new UnauthorizedError(LINK_REFUSED);
        const query = new URL(req.url ?? '/', 'http://portal.invalid').searchParams;
        await handler({ req, res, query, params, session, startedAt });
      } catch (error) {
        answerError(req, res, error, session);
      }
    },
  });

  function answerError(req: IncomingMessage, res: ServerResponse, error: unknown, session: PortalSession | null): void {
    sendError(req, res, forTenant(error), log, (answer) => <PortalErrorPage status={answer.status} message={answer.message} tenant={session?.tenant ?? null} />);
  }

  /**
   * The session tenant's endpoint, or the same 404 whether it is another tenant's or
   * nobody's. With an operator's disable reason as it is: show it through endpointForTenant.
   */
  async function ownEndpoint(session: PortalSession, id: string): Promise<Endpoint> {
    const endpoint = /^\d{1,19}$/.test(id) ? await mr.endpoints.get(id) : null;
    if (endpoint === null || endpoint.tenant !== session.tenant) throw new EndpointNotFoundError(id.slice(0, 40));
    return endpoint;
  }

  /** A POST's form, once it proved to come from a portal page of this session. */
  async function genuineForm(request: PortalRequest): Promise<URLSearchParams> {
    const form = await readForm(request.req);
    assertSameOrigin(request.req);
    if (!signer.isCsrfToken(request.session, form.get('csrf') ?? undefined)) throw new CsrfError();
    return form;
  }

  function acted(request: PortalRequest, location: string, body: unknown): void {
    if (wantsHtml(request.req)) redirect(request.res, location);
    else sendJson(request.res, 200, body);
  }

  async function showHome(request: PortalRequest, status: number, refused: AddAttempt | null): Promise<void> {
    const { session } = request;
    const page = await endpointRowsPage(mr, { tenant: session.tenant, after: idCursor(request.query) }, PAGE_SIZE);
    const rows = page.rows.map((row) => ({ ...row, endpoint: endpointForTenant(row.endpoint) }));
    const { nextAfter } = page;
    sendView(
      request.res,
      status,
      <PortalHomePage tenant={session.tenant} rows={rows} nextAfter={nextAfter} notice={NOTICES[request.query.get('done') ?? '']} refused={refused} csrfToken={session.csrfToken} addToken={SubmittedOnce.mint()} />,
      { startedAt: request.startedAt },
    );
  }

  /** A valid link's grant, or the one 401 every refused link gets. */
  function grantOf(token: string | undefined): PortalGrant {
    const grant = token === undefined ? null : signer.verifyLink(token, now());
    if (grant === null) throw new UnauthorizedError(LINK_REFUSED);
    return grant;
  }

  /**
   * A session for `grant`'s tenant, set by a redirect to the portal's home: a redirect, not a
   * page, so the URL with the token is not left as a page's address that a link or script
   * could pass on as a referrer.
   */
  function signIn(req: IncomingMessage, res: ServerResponse, grant: PortalGrant): void {
    const maxAgeSeconds = Math.max(1, Math.floor((grant.expiresAtMs - now()) / 1_000));
    redirect(res, portalHref(''), [cookie(req, PORTAL_COOKIE, signer.newSession(grant), { path: PORTAL_BASE, maxAgeSeconds, sameSite: 'Lax' })]);
  }

  const enterRoute: Route = {
    path: `${PORTAL_BASE}/enter/:token`,
    methods: ['GET', 'HEAD'],
    handle(req, res, params) {
      try {
        const grant = grantOf(params.token);
        const current = signer.sessionOf(cookiesOf(req)[PORTAL_COOKIE], now());
        if (current === null || current.tenant === grant.tenant) {
          signIn(req, res, grant);
          return;
        }
        // Signed in as another tenant: a link another tenant forwarded would otherwise swap
        // the session silently (login CSRF), and what the person adds next lands in that
        // tenant's account. They confirm with a POST of this session (the `switch` action).
        // This page's address is the link itself: its requests name only the origin as
        // referrer, by header and by the page's meta tag (which would override the header).
        sendView(res, 200, <PortalSwitchPage current={current.tenant} target={grant.tenant} link={params.token!} csrfToken={current.csrfToken} />, {
          headers: { 'referrer-policy': 'strict-origin' },
        });
      } catch (error) {
        answerError(req, res, error, null);
      }
    },
  };

  return [
    enterRoute,
    assetRoute(PORTAL_BASE),

    guarded(PORTAL_BASE, ['GET', 'HEAD'], (request) => showHome(request, 200, null)),
    // `/portal/` as typed (or as a proxy rewrites it) is the same page.
    { path: `${PORTAL_BASE}/`, methods: ['GET', 'HEAD'], handle: (_req, res) => redirect(res, portalHref('')) },

    guarded(`${PORTAL_BASE}/endpoints/:rest`, ['GET', 'HEAD'], async (request) => {
      const { session } = request;
      // /portal/endpoints/<id> or /portal/endpoints/<id>/deliveries/<deliveryId>
      const match = /^([^/]+)(?:\/deliveries\/([^/]+))?$/.exec(request.params.rest!);
      if (!match) throw new RouteNotFoundError(`${PORTAL_BASE}/endpoints`);
      const endpoint = await ownEndpoint(session, match[1]!);
      const done = request.query.get('done') ?? '';
      const recovered = /^\d{1,9}$/.exec(request.query.get('count') ?? '');
      const notice = done === 'recovered' && recovered ? `Re-sending ${recovered[0]} deliveries.` : NOTICES[done];
      if (match[2] === undefined) {
        const [health, deliveries] = await Promise.all([
          healthOf(mr, endpoint.id),
          mr.deliveries.list({ endpointId: endpoint.id, after: idCursor(request.query), limit: PAGE_SIZE + 1 }),
        ]);
        const page = deliveries.slice(0, PAGE_SIZE);
        const nextAfter = deliveries.length > PAGE_SIZE ? page[page.length - 1]!.id : null;
        sendView(
          request.res,
          200,
          <PortalEndpointPage tenant={session.tenant} endpoint={endpointForTenant(endpoint)} health={health} deliveries={page} nextAfter={nextAfter} notice={notice} recoverSince={new Date(now() - RECOVER_DEFAULT_MS).toISOString().slice(0, 16)} csrfToken={session.csrfToken} />,
          { startedAt: request.startedAt },
        );
        return;
      }
      const delivery = await deliveryOf(mr, endpoint, match[2]);
      const job = delivery.jobId === null ? null : await mr.getJob(delivery.jobId);
      sendView(
        request.res,
        200,
        <PortalDeliveryPage
          tenant={session.tenant}
          endpoint={endpointForTenant(endpoint)}
          delivery={delivery}
          attempts={job?.attemptsLog ?? []}
          resends={job?.replays ?? []}
          notice={notice}
          csrfToken={session.csrfToken}
        />,
        { startedAt: request.startedAt },
      );
    }),

    guarded(`${PORTAL_BASE}/actions/:action`, ['POST'], async (request) => {
      const form = await genuineForm(request);
      const { session } = request;
      switch (request.params.action) {
        case 'add-endpoint': {
          const attempt = { url: field(form, 'url') ?? '', description: field(form, 'description') ?? '', eventTypes: field(form, 'eventTypes') ?? '' };
          let submitted;
          try {
            submitted = await addForms.submit(session.tenant, field(form, 'once'), attempt, () =>
              mr.endpoints.addByTenant({
                tenant: session.tenant,
                url: attempt.url,
                ...(attempt.description !== '' ? { description: attempt.description } : {}),
                ...(attempt.eventTypes !== '' && attempt.eventTypes.trim() !== '*' ? { eventTypes: eventTypesOf(attempt.eventTypes) } : {}), // '*': every type
              }),
            );
          } catch (error) {
            // A refused URL (the SSRF guard, a typo, one the operator disabled) is shown above
            // the form, with what was typed.
            const refused = error instanceof MailroomError && (error.httpStatus === 400 || error instanceof EndpointHeldByOperatorError);
            if (!refused || !wantsHtml(request.req)) throw error;
            await showHome(request, error.httpStatus ?? 400, { ...attempt, error: forTenant(error).message });
            return;
          }
          if ('repeatOf' in submitted) {
            // The same form again: the endpoint its first sending added, without the secret.
            acted(request, portalHref(`/endpoints/${submitted.repeatOf}`, { done: 'already-added' }), { endpoint: endpointJsonForTenant(await ownEndpoint(session, submitted.repeatOf)) });
            return;
          }
          const added = submitted.created;
          log.info({ endpointId: added.id, tenant: session.tenant, by: 'portal' }, 'portal added an endpoint');
          const { secret, ...endpoint } = added;
          answerWithSecret(request, 201, <PortalSecretPage tenant={session.tenant} endpoint={endpoint} secret={secret} />, { endpoint: endpointJsonForTenant(endpoint), secret });
          return;
        }
        case 'switch': {
          // Confirmed on the switch page, by a genuine form of the session it replaces.
          const grant = grantOf(required(form, 'link'));
          log.info({ tenant: grant.tenant, from: session.tenant, by: 'portal' }, 'portal session switched to another tenant');
          signIn(request.req, request.res, grant);
          return;
        }
        case 'disable':
        case 'enable': {
          // Checked in the store's write itself: an endpoint disabled already (a second
          // click, the operator) stays as it is, and the operator's disable is never undone.
          const endpoint = await ownEndpoint(session, required(form, 'id'));
          const enable = request.params.action === 'enable';
          const result = await mr.endpoints.setEnabledByTenant(endpoint.id, enable);
          acted(request, portalHref(`/endpoints/${endpoint.id}`, { done: enable ? 'enabled' : 'disabled' }), endpointJsonForTenant(result));
          return;
        }
        case 'recover': {
          const endpoint = await ownEndpoint(session, required(form, 'id'));
          // "Enable it first" is advice only the operator can take here.
          if (endpoint.disabledBy === 'operator') throw new EndpointHeldByOperatorError(endpoint.id);
          const result = await mr.endpoints.recover(endpoint.id, { since: parseTime(required(form, 'since'), 'since') });
          log.info({ endpointId: endpoint.id, tenant: session.tenant, count: result.count, by: 'portal' }, 'portal recovered deliveries');
          acted(request, portalHref(`/endpoints/${endpoint.id}`, { done: 'recovered', count: String(result.count) }), result);
          return;
        }
        case 'rotate-secret': {
          const endpoint = await ownEndpoint(session, required(form, 'id'));
          // A second rotation within the day is refused (MR_ERR_ROTATION_IN_PROGRESS), so a
          // refresh of the secret's page cannot drop the secret the receiver still holds.
          const { secret, previousSecretUntil } = await mr.endpoints.rotateSecret(endpoint.id);
          log.info({ endpointId: endpoint.id, tenant: session.tenant, by: 'portal' }, 'portal rotated a signing secret');
          answerWithSecret(
            request,
            200,
            <PortalSecretPage tenant={session.tenant} endpoint={endpoint} secret={secret} previousSecretUntil={previousSecretUntil} />,
            { id: endpoint.id, secret, previousSecretUntil },
          );
          return;
        }
        case 'resend': {
          const endpoint = await ownEndpoint(session, required(form, 'endpoint'));
          const delivery = await deliveryOf(mr, endpoint, required(form, 'id'));
          // A re-send puts the delivery back to pending with its job (a second click, another tab).
          if (delivery.status === 'pending' && delivery.jobId !== null && ((await mr.getJob(delivery.jobId))?.replays.length ?? 0) > 0) {
            throw alreadyResending(delivery.id);
          }
          if (delivery.status !== 'failed' || delivery.jobId === null) {
            throw new InvalidArgumentError(`Delivery ${delivery.id} is ${delivery.status}; only a failed delivery can be re-sent.`);
          }
          // Its deliver job, dead, goes back to pending with a fresh budget and its history kept (SPEC §3 replay).
          await mr.replay({ id: delivery.jobId }, { reason: 're-sent from the tenant portal', by: 'portal' }).catch((error: unknown) => {
            // Pending or running: a re-send (a second click, another tab) put it back in line
            // between the read above and this replay. The operator's wording (a job id,
            // "use retryNow") means nothing to a tenant.
            if (error instanceof JobStateError && (error.status === 'pending' || error.status === 'running')) {
              throw alreadyResending(delivery.id, error);
            }
            throw error;
          });
          log.info({ deliveryId: delivery.id, endpointId: endpoint.id, tenant: session.tenant, by: 'portal' }, 'portal re-sent a delivery');
          acted(request, portalHref(`/endpoints/${endpoint.id}/deliveries/${delivery.id}`, { done: 'resent' }), { id: delivery.id, resent: true });
          return;
        }
        default:
          throw new RouteNotFoundError(`${PORTAL_BASE}/actions`);
      }
    }),
  ];
}

/** A re-send of a delivery that is back in line already (a second click, another tab). */
function alreadyResending(deliveryId: string, cause?: unknown): MailroomError {
  return new MailroomError('MR_ERR_JOB_STATE', `Delivery ${deliveryId} is already being re-sent.`, { httpStatus: 409, cause });
}

/**
 * An endpoint in a JSON answer to the tenant: what the portal's pages show of it, with an
 * operator's disable reason in the tenant's words. Its metadata, rate limit and adder are
 * the operator's (internal notes, billing ids) and stay out, as they do on the pages.
 */
function endpointJsonForTenant(endpoint: Endpoint) {
  const { id, tenant, url, description, eventTypes, enabled, disabledReason, disabledBy, createdAt, updatedAt } = endpointForTenant(endpoint);
  return { id, tenant, url, description, eventTypes, enabled, disabledReason, disabledBy, createdAt, updatedAt };
}

/** The only answers that carry a signing secret: a page (or JSON) never cached, never redirected to. */
function answerWithSecret(request: PortalRequest, status: number, page: VNode, json: unknown): void {
  if (wantsHtml(request.req)) sendView(request.res, status, page);
  else sendJson(request.res, status, json, { 'cache-control': 'no-store' });
}

/**
 * One delivery of an endpoint already proven the tenant's, or a 404: read as the first of
 * the endpoint's deliveries after id − 1 (keyset on its index), so a delivery of another
 * endpoint, another tenant's included, is never found through this one.
 */
async function deliveryOf(mr: Mailroom, endpoint: Endpoint, id: string) {
  const notFound = new RouteNotFoundError(`${PORTAL_BASE}/deliveries`, 'No delivery with that id on this endpoint.');
  if (!/^\d{1,19}$/.test(id) || BigInt(id) < 1n) throw notFound;
  const [delivery] = await mr.deliveries.list({ endpointId: endpoint.id, after: (BigInt(id) - 1n).toString(), limit: 1 });
  if (delivery === undefined || delivery.id !== id || delivery.endpointId !== endpoint.id) throw notFound;
  return delivery;
}

/**
 * An error as the tenant reads it. The operator's wording advises what only the operator
 * can do (a config allowlist, an API option) and, for a blocked host, names the internal
 * address it resolved to, which a tenant must not learn; same code and status.
 */
function forTenant<E>(error: E): E | MailroomError {
  if (error instanceof UrlBlockedError) {
    return new MailroomError(error.code, error.tenantMessage, {
      httpStatus: error.httpStatus,
      cause: error,
    });
  }
  if (error instanceof RotationInProgressError) {
    return new MailroomError(error.code, `The secret before your last rotation still signs until ${displayTime(new Date(Math.ceil(error.overlapUntil.getTime() / 1_000) * 1_000))}; rotate again after that time.`, {
      httpStatus: error.httpStatus,
      cause: error,
    });
  }
  return error;
}

/** `a, b ,c` as a list of event types. */
function eventTypesOf(text: string): string[] {
  return text.split(',').map((type) => type.trim()).filter((type) => type !== '');
}

function field(values: URLSearchParams, name: string): string | undefined {
  return optionalField(values, name, MAX_FIELD_CHARS);
}

function required(values: URLSearchParams, name: string): string {
  return requiredField(values, name, MAX_FIELD_CHARS);
}
