// The tenant portal's pages: one tenant's endpoints with their health, each endpoint's
// deliveries, each delivery's attempts (status, duration, response excerpt), the form to add
// an endpoint and the page that shows its secret once. Nothing here links to an operator
// page, and no shape rendered here carries a secret except the one just created.

import type { ComponentChildren } from 'preact';
import type { Delivery, Endpoint, EndpointHealth } from '../../core/outgoing-types.js';
import type { Attempt, Replay } from '../../core/types.js';
import { ActionForm, Clip, hrefUnder, NextPageLink, TableHead, Time } from './components.js';
import { EndpointState, HEALTH_COLUMNS, HealthCells } from './endpoints.js';
import type { EndpointRow } from './endpoints.js';
import { PageHead } from './layout.js';

/** Where the portal is mounted. */
export const PORTAL_BASE = '/portal';

/** A path under the portal. */
export function portalHref(path: string, query: Record<string, string | undefined> = {}): string {
  return hrefUnder(PORTAL_BASE, path, query);
}

function PortalLayout(props: { readonly title: string; readonly tenant: string | null; readonly referrer?: 'strict-origin'; readonly children: ComponentChildren }) {
  return (
    <html lang="en">
      <PageHead title={props.title} base={PORTAL_BASE} referrer={props.referrer} />
      <body class="portal">
        <header>
          <strong class="brand">Webhooks</strong>
          {props.tenant === null ? null : (
            <nav>
              <a href={portalHref('')}>Endpoints</a>
              <span class="muted tenant">{props.tenant}</span>
            </nav>
          )}
        </header>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

export function PortalErrorPage(props: { readonly status: number; readonly message: string; readonly tenant: string | null }) {
  return (
    <PortalLayout title={`Error ${props.status}`} tenant={props.tenant}>
      <h1>{`Error ${props.status}`}</h1>
      <p class="error-text">{props.message}</p>
      {props.tenant === null ? null : <p><a href={portalHref('')}>Back to your endpoints</a></p>}
    </PortalLayout>
  );
}

/**
 * A link for another tenant opened in a browser signed in already: the session is switched
 * only when the person confirms, so a link forwarded by another tenant cannot quietly make
 * the next endpoint they add land in that tenant's account (login CSRF). The page's address
 * is the link, so a request from it names only the origin as referrer (`strict-origin`, not
 * `no-referrer`: under that, browsers send the form's post with `Origin: null`, which the
 * same-origin check refuses). The form carries the link in its body, never in a URL that a
 * log line or a referrer could repeat.
 */
export function PortalSwitchPage(props: { readonly current: string; readonly target: string; readonly link: string; readonly csrfToken: string }) {
  return (
    <PortalLayout title="Switch account?" tenant={props.current} referrer="strict-origin">
      <h1>Switch to another account?</h1>
      <p>
        This browser is signed in to the portal as <strong>{props.current}</strong>. The link you opened is for <strong>{props.target}</strong>.
      </p>
      <p>Switch only if you expected a link for that account: anything you do after switching is done as {props.target}.</p>
      <ActionForm action="switch" base={PORTAL_BASE} csrfToken={props.csrfToken} fields={{ link: props.link }} class="confirm">
        <button type="submit">{`Switch to ${props.target}`}</button>
      </ActionForm>
      <p>
        <a href={portalHref('')}>{`Stay signed in as ${props.current}`}</a>
      </p>
    </PortalLayout>
  );
}

/** What the add form held when it was refused, to show it again with the reason. */
export interface AddAttempt {
  readonly url: string;
  readonly description: string;
  readonly eventTypes: string;
  readonly error: string;
}

export function PortalHomePage(props: {
  readonly tenant: string;
  readonly rows: readonly EndpointRow[];
  readonly nextAfter: string | null;
  readonly notice: string | undefined;
  readonly refused: AddAttempt | null;
  readonly csrfToken: string;
  /** Sent back with the add form: the same form sent twice adds one endpoint. */
  readonly addToken: string;
}) {
  return (
    <PortalLayout title="Endpoints" tenant={props.tenant}>
      <h1>Your webhook endpoints</h1>
      {props.notice ? <p class="notice">{props.notice}</p> : null}
      {props.rows.length === 0 ? (
        <p class="muted">No endpoints yet: add one below.</p>
      ) : (
        <table class="endpoints">
          <TableHead columns={[{ num: 'ID' }, 'URL', 'Events', 'State', ...HEALTH_COLUMNS]} />
          <tbody>
            {props.rows.map(({ endpoint, health }) => (
              <tr data-endpoint={endpoint.id}>
                <td class="num">
                  <a href={portalHref(`/endpoints/${endpoint.id}`)}>{endpoint.id}</a>
                </td>
                <td>
                  <a href={portalHref(`/endpoints/${endpoint.id}`)}>
                    <Clip text={endpoint.url} max={60} />
                  </a>
                </td>
                <td>{endpoint.eventTypes === null ? <span class="muted">all</span> : endpoint.eventTypes.join(', ')}</td>
                <td>
                  <EndpointState endpoint={endpoint} />
                </td>
                <HealthCells health={health} />
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <NextPageLink href={props.nextAfter === null ? null : portalHref('', { after: props.nextAfter })} />
      <h2>Add an endpoint</h2>
      {props.refused ? <p class="error-text">{props.refused.error}</p> : null}
      <ActionForm action="add-endpoint" base={PORTAL_BASE} csrfToken={props.csrfToken} fields={{ once: props.addToken }} class="confirm" submitOnce>
        <label>
          URL <input name="url" type="url" required placeholder="https://example.com/webhooks" value={props.refused?.url ?? ''} />
        </label>
        <label>
          Description <input name="description" value={props.refused?.description ?? ''} />
        </label>
        <label>
          Event types (comma-separated; empty for all) <input name="eventTypes" placeholder="invoice.paid, invoice.voided" value={props.refused?.eventTypes ?? ''} />
        </label>
        <button type="submit">Add endpoint</button>
      </ActionForm>
    </PortalLayout>
  );
}

/**
 * The one page that shows a signing secret: a new endpoint's, or the new one after a
 * rotation (`previousSecretUntil`: the old one signs beside it until then).
 */
export function PortalSecretPage(props: { readonly tenant: string; readonly endpoint: Endpoint; readonly secret: string; readonly previousSecretUntil?: Date }) {
  const rotated = props.previousSecretUntil !== undefined;
  return (
    <PortalLayout title={rotated ? 'New signing secret' : 'Endpoint added'} tenant={props.tenant}>
      <h1>{rotated ? `New signing secret for endpoint ${props.endpoint.id}` : `Endpoint ${props.endpoint.id} added`}</h1>
      <p>
        Deliveries to <code>{props.endpoint.url}</code> are signed per Standard Webhooks with this secret. Copy it now:{' '}
        <strong>it is shown this once</strong> and cannot be read again.
      </p>
      {rotated ? (
        <p>
          The old secret keeps signing beside it until <Time at={props.previousSecretUntil!} />: switch your receiver to the new one before then.
        </p>
      ) : null}
      <pre class="secret">{props.secret}</pre>
      <p>
        <a href={portalHref(`/endpoints/${props.endpoint.id}`)}>Go to the endpoint</a>
      </p>
    </PortalLayout>
  );
}

export function PortalEndpointPage(props: {
  readonly tenant: string;
  readonly endpoint: Endpoint;
  readonly health: EndpointHealth | null;
  readonly deliveries: readonly Delivery[];
  readonly nextAfter: string | null;
  readonly notice: string | undefined;
  /** The recover form's default: a day ago, as the form's `YYYY-MM-DDTHH:MM` (UTC). */
  readonly recoverSince: string;
  readonly csrfToken: string;
}) {
  const { endpoint } = props;
  return (
    <PortalLayout title={`Endpoint ${endpoint.id}`} tenant={props.tenant}>
      <h1>{`Endpoint ${endpoint.id}`}</h1>
      {props.notice ? <p class="notice">{props.notice}</p> : null}
      <table class="facts">
        <tbody>
          <tr>
            <th>URL</th>
            <td>{endpoint.url}</td>
          </tr>
          <tr>
            <th>Description</th>
            <td>{endpoint.description ?? <span class="muted">-</span>}</td>
          </tr>
          <tr>
            <th>Events</th>
            <td>{endpoint.eventTypes === null ? 'all' : endpoint.eventTypes.join(', ')}</td>
          </tr>
          <tr>
            <th>State</th>
            <td>
              <EndpointState endpoint={endpoint} />
            </td>
          </tr>
        </tbody>
      </table>
      <table class="health">
        <TableHead columns={[...HEALTH_COLUMNS]} />
        <tbody>
          <tr>
            <HealthCells health={props.health} />
          </tr>
        </tbody>
      </table>
      <div class="actions">
        {endpoint.enabled ? (
          <>
            <ActionForm action="disable" base={PORTAL_BASE} csrfToken={props.csrfToken} fields={{ id: endpoint.id }}>
              <button type="submit" class="danger">
                Disable
              </button>
            </ActionForm>
            <ActionForm action="recover" base={PORTAL_BASE} csrfToken={props.csrfToken} fields={{ id: endpoint.id }}>
              <label>
                Re-send what failed or was skipped since (UTC) <input name="since" value={props.recoverSince} />
              </label>
              <button type="submit">Re-send</button>
            </ActionForm>
            <ActionForm action="rotate-secret" base={PORTAL_BASE} csrfToken={props.csrfToken} fields={{ id: endpoint.id }}>
              <button type="submit" title="A new secret; the old one keeps signing beside it for a day">
                Rotate signing secret
              </button>
            </ActionForm>
          </>
        ) : endpoint.disabledBy === 'operator' ? (
          <p class="muted">Your provider disabled this endpoint; ask them to enable it again.</p>
        ) : (
          <ActionForm action="enable" base={PORTAL_BASE} csrfToken={props.csrfToken} fields={{ id: endpoint.id }}>
            <button type="submit">Enable</button>
          </ActionForm>
        )}
      </div>
      <h2>Deliveries</h2>
      {props.deliveries.length === 0 ? (
        <p class="muted">Nothing delivered to this endpoint yet.</p>
      ) : (
        <table class="deliveries">
          <TableHead columns={[{ num: 'ID' }, 'Event type', { num: 'Message' }, 'Status', { num: 'Attempts' }, 'Last error', 'Created']} />
          <tbody>
            {props.deliveries.map((delivery) => (
              <tr data-delivery={delivery.id}>
                <td class="num">
                  <a href={portalHref(`/endpoints/${endpoint.id}/deliveries/${delivery.id}`)}>{delivery.id}</a>
                </td>
                <td>{delivery.type}</td>
                <td class="num">{delivery.messageId}</td>
                <td>
                  <DeliveryStatusBadge status={delivery.status} />
                </td>
                <td class="num">{String(delivery.attempts)}</td>
                <td class="error-text">
                  <Clip text={delivery.lastError} max={80} />
                </td>
                <td>
                  <Time at={delivery.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <NextPageLink href={props.nextAfter === null ? null : portalHref(`/endpoints/${endpoint.id}`, { after: props.nextAfter })} />
    </PortalLayout>
  );
}

function DeliveryStatusBadge(props: { readonly status: Delivery['status'] }) {
  return <span class={`status delivery-${props.status}`}>{props.status}</span>;
}

export function PortalDeliveryPage(props: {
  readonly tenant: string;
  readonly endpoint: Endpoint;
  readonly delivery: Delivery;
  readonly attempts: readonly Attempt[];
  /** Re-sends of this delivery (its job's replays), marked where they fall among the attempts. */
  readonly resends: readonly Replay[];
  readonly notice: string | undefined;
  readonly csrfToken: string;
}) {
  const { endpoint, delivery } = props;
  // Attempt numbers start again after a re-send; the marker row says why "1" shows twice.
  const resendsAt = (count: number) =>
    props.resends
      .filter((resend) => resend.attemptsBefore === count)
      .map((resend) => (
        <tr class="resent">
          <td class="num" />
          <td>
            <Time at={resend.at} />
          </td>
          <td colSpan={4}>{resend.by === 'portal' ? 'Re-sent from this portal' : 'Re-sent by the service'}</td>
        </tr>
      ));
  return (
    <PortalLayout title={`Delivery ${delivery.id}`} tenant={props.tenant}>
      <h1>
        {`Delivery ${delivery.id} `}
        <DeliveryStatusBadge status={delivery.status} />
      </h1>
      {props.notice ? <p class="notice">{props.notice}</p> : null}
      <table class="facts">
        <tbody>
          <tr>
            <th>Endpoint</th>
            <td>
              <a href={portalHref(`/endpoints/${endpoint.id}`)}>{`${endpoint.id}: ${endpoint.url}`}</a>
            </td>
          </tr>
          <tr>
            <th>Event type</th>
            <td>{delivery.type}</td>
          </tr>
          <tr>
            <th>Message id</th>
            <td>
              <code>{delivery.messageId}</code> <span class="muted">(the webhook-id header)</span>
            </td>
          </tr>
          <tr>
            <th>Created</th>
            <td>
              <Time at={delivery.createdAt} />
            </td>
          </tr>
        </tbody>
      </table>
      {delivery.status === 'failed' ? (
        <div class="actions">
          <ActionForm action="resend" base={PORTAL_BASE} csrfToken={props.csrfToken} fields={{ endpoint: endpoint.id, id: delivery.id }}>
            <button type="submit">Re-send</button>
          </ActionForm>
        </div>
      ) : null}
      <h2>Attempts</h2>
      {props.attempts.length === 0 ? (
        <p class="muted">{delivery.status === 'skipped' ? 'Not sent: the endpoint was disabled when it was published.' : 'No attempt yet.'}</p>
      ) : (
        <table class="attempts">
          <TableHead columns={[{ num: '#' }, 'Started', 'Outcome', { num: 'HTTP status' }, { num: 'Duration' }, 'Response excerpt or error']} />
          <tbody>
            {props.attempts.map((attempt, index) => {
              const details = detailsOf(attempt.details);
              return [
                ...resendsAt(index),
                <tr class={`outcome-${attempt.outcome}`}>
                  <td class="num">{String(attempt.attempt)}</td>
                  <td>
                    <Time at={attempt.startedAt} />
                  </td>
                  <td>{attempt.outcome}</td>
                  <td class="num">{details.status === undefined ? <span class="muted">-</span> : String(details.status)}</td>
                  <td class="num">{details.durationMs === undefined ? <span class="muted">-</span> : `${Math.round(details.durationMs)} ms`}</td>
                  <td>
                    {details.excerpt !== undefined ? <code class="excerpt">{details.excerpt}</code> : null}
                    {details.blocked ? (
                      // The operator's wording names the address the host resolved to and a config key; the tenant gets neither.
                      <span class="error-text">Not sent: the endpoint's host is not a public address.</span>
                    ) : attempt.error ? (
                      <span class="error-text">{attempt.error}</span>
                    ) : null}
                  </td>
                </tr>,
              ];
            })}
            {resendsAt(props.attempts.length)}
          </tbody>
        </table>
      )}
    </PortalLayout>
  );
}

/** The fields of a deliver attempt's details the portal shows, each only when it has the expected type. */
function detailsOf(details: unknown): { status?: number; durationMs?: number; excerpt?: string; blocked?: true } {
  if (typeof details !== 'object' || details === null) return {};
  const { status, durationMs, excerpt, error } = details as Record<string, unknown>;
  return {
    // Set by the deliver task when the SSRF guard refused the send (`url_blocked`).
    ...(error === 'url_blocked' ? { blocked: true as const } : {}),
    ...(typeof status === 'number' ? { status } : {}),
    ...(typeof durationMs === 'number' ? { durationMs } : {}),
    ...(typeof excerpt === 'string' ? { excerpt: excerpt.slice(0, 2_048) } : {}),
  };
}
