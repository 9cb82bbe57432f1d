// The operator's view of outgoing-webhook endpoints: every tenant's, with each one's health
// (success rate, last success and failure, breaker, backlog) and the actions an operator
// takes at night: disable with a reason, enable, recover what failed or was skipped since a
// time. No page shows a signing secret: the shapes it renders do not carry one.

import type { Endpoint, EndpointHealth } from '../../core/outgoing-types.js';
import { ActionForm, Clip, FilterField, href, NextPageLink, TableHead, Time } from './components.js';
import { Layout } from './layout.js';

/** An endpoint with its health, as a list row shows it. */
export interface EndpointRow {
  readonly endpoint: Endpoint;
  readonly health: EndpointHealth | null;
}

/** The health columns, shared by the operator's list and the tenant portal. */
export const HEALTH_COLUMNS = [{ num: 'Success rate' }, 'Last success', 'Last failure', 'Breaker', { num: 'Backlog' }] as const;

/** One endpoint's health as table cells (blank when the store had none for it). */
export function HealthCells(props: { readonly health: EndpointHealth | null }) {
  const { health } = props;
  if (health === null) return <td colSpan={HEALTH_COLUMNS.length} class="muted">no health recorded</td>;
  return (
    <>
      <td class="num">{health.successRate === null ? <span class="muted">-</span> : `${(health.successRate * 100).toFixed(1)}%`}</td>
      <td>
        <Time at={health.lastSuccessAt} />
      </td>
      <td>
        <Time at={health.lastFailureAt} />
      </td>
      <td>
        <span class={`breaker breaker-${health.breakerState}`}>{health.breakerState.replace('_', '-')}</span>
      </td>
      <td class="num">{String(health.backlog)}</td>
    </>
  );
}

/** Enabled, or disabled with its reason. */
export function EndpointState(props: { readonly endpoint: Endpoint }) {
  return props.endpoint.enabled ? (
    <span class="state state-enabled">enabled</span>
  ) : (
    <span class="state state-disabled">
      disabled{props.endpoint.disabledReason ? <span class="muted">{`: ${props.endpoint.disabledReason}`}</span> : null}
    </span>
  );
}

export function EndpointsPage(props: {
  readonly tenant: string | undefined;
  readonly rows: readonly EndpointRow[];
  readonly nextAfter: string | null;
  readonly notice: string | undefined;
  /** The recover form's default: a day ago, as the form's `YYYY-MM-DDTHH:MM` (UTC). */
  readonly recoverSince: string;
  readonly csrfToken: string | null;
}) {
  return (
    <Layout title="Endpoints" section="endpoints" csrfToken={props.csrfToken}>
      <h1>Endpoints</h1>
      {props.notice ? <p class="notice">{props.notice}</p> : null}
      <form method="get" action={href('/endpoints')} class="filters">
        <FilterField label="Tenant" name="tenant" value={props.tenant} />
        <button type="submit">Filter</button> <a href={href('/endpoints')}>Clear</a>
      </form>
      {props.rows.length === 0 ? (
        <p class="muted">No endpoints{props.tenant ? ' for this tenant' : ''} yet: add one with mr.endpoints.add or mailroom endpoints add.</p>
      ) : (
        <table class="endpoints">
          <TableHead columns={[{ num: 'ID' }, 'Tenant', 'URL', 'State', ...HEALTH_COLUMNS, 'Actions']} />
          <tbody>
            {props.rows.map(({ endpoint, health }) => (
              <tr data-endpoint={endpoint.id}>
                <td class="num">{endpoint.id}</td>
                <td>
                  <a href={href('/endpoints', { tenant: endpoint.tenant })}>{endpoint.tenant}</a>
                </td>
                <td class="url">
                  <Clip text={endpoint.url} max={80} />
                </td>
                <td>
                  <EndpointState endpoint={endpoint} />
                </td>
                <HealthCells health={health} />
                <td>
                  <EndpointActions endpoint={endpoint} tenant={props.tenant} recoverSince={props.recoverSince} csrfToken={props.csrfToken} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <NextPageLink href={props.nextAfter === null ? null : href('/endpoints', { tenant: props.tenant, after: props.nextAfter })} />
    </Layout>
  );
}

/** Disable (with a reason) an enabled endpoint; enable a disabled one; recover an enabled one. */
function EndpointActions(props: { readonly endpoint: Endpoint; readonly tenant: string | undefined; readonly recoverSince: string; readonly csrfToken: string | null }) {
  const { endpoint } = props;
  const fields = { id: endpoint.id, tenant: props.tenant };
  if (!endpoint.enabled) {
    return (
      <ActionForm action="endpoint-enable" csrfToken={props.csrfToken} fields={fields}>
        <button type="submit">Enable</button>
      </ActionForm>
    );
  }
  return (
    <div class="row-actions">
      <ActionForm action="endpoint-disable" csrfToken={props.csrfToken} fields={fields}>
        <input name="reason" placeholder="reason" required aria-label={`reason to disable endpoint ${endpoint.id}`} />
        <button type="submit" class="danger">
          Disable
        </button>
      </ActionForm>
      <ActionForm action="endpoint-recover" csrfToken={props.csrfToken} fields={fields}>
        <input name="since" value={props.recoverSince} aria-label={`recover endpoint ${endpoint.id} since (UTC)`} />
        <button type="submit">Recover</button>
      </ActionForm>
    </div>
  );
}
