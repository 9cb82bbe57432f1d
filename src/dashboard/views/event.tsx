// Inbound events: the list by source and type, and one event with its headers (secrets
// hidden), its body (as text, bounded, secrets hidden) and the jobs it fanned out to.

import type { EventSummary, InboundEvent, Job } from '../../core/types.js';
import { visibleHeaders } from '../../providers/visible-headers.js';
import { Clip, FilterField, href, IdCell, Pre, TableHead, Time } from './components.js';
import { JobTable } from './jobs.js';
import { Layout } from './layout.js';

/** At most this much of a body is put in the page. */
const BODY_DISPLAY_CHARS = 64 * 1024;

export interface EventsQuery {
  readonly source?: string;
  readonly type?: string;
  readonly after?: string;
}

export function EventHeaders(props: { readonly headers: Record<string, string> }) {
  const shown = Object.entries(visibleHeaders(props.headers));
  if (shown.length === 0) return <p class="muted">No headers stored.</p>;
  return (
    <table class="headers">
      <tbody>
        {shown.map(([name, value]) => (
          <tr>
            <th>{name}</th>
            <td>
              <Clip text={value} max={300} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function EventsPage(props: {
  readonly query: EventsQuery;
  readonly events: readonly EventSummary[];
  readonly nextAfter: string | null;
  readonly csrfToken: string | null;
}) {
  const { query } = props;
  return (
    <Layout title="Events" section="events" csrfToken={props.csrfToken}>
      <h1>Inbound events</h1>
      <form method="get" action={href('/events')} class="filters">
        <FilterField label="Source" name="source" value={query.source} />
        <FilterField label="Type" name="type" value={query.type} />
        <button type="submit">Filter</button> <a href={href('/events')}>Clear</a>
      </form>
      {props.events.length === 0 ? (
        <p class="muted">No events match.</p>
      ) : (
        <table>
          <TableHead columns={[{ num: 'ID' }, 'Source', 'Type', 'Delivery id', 'Received', { num: 'Bytes' }, { num: 'Jobs' }]} />
          <tbody>
            {props.events.map((event) => (
              <tr>
                <IdCell kind="events" id={event.id} />
                <td>
                  <a href={href('/events', { source: event.source })}>{event.source}</a>
                </td>
                <td>{event.type ?? '-'}</td>
                <td>
                  <Clip text={event.deliveryId} max={40} />
                </td>
                <td>
                  <Time at={event.receivedAt} />
                </td>
                <td class="num">{event.bodyBytes.toLocaleString('en')}</td>
                <td class="num">{String(event.jobCount)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {props.nextAfter === null ? null : (
        <p>
          <a href={href('/events', { source: query.source, type: query.type, after: props.nextAfter })} rel="next">
            Older events →
          </a>
        </p>
      )}
    </Layout>
  );
}

export function EventPage(props: {
  readonly event: InboundEvent;
  /** The body as shown: a JSON body with secrets and `dashboard.redactPaths` hidden. */
  readonly bodyText: string;
  readonly jobs: readonly Job[];
  readonly csrfToken: string | null;
}) {
  const { event } = props;
  return (
    <Layout title={`Event ${event.id}`} section="events" csrfToken={props.csrfToken}>
      <h1>{`Event ${event.id}`}</h1>
      <p>
        {`From ${event.source}${event.type ? `, type ${event.type}` : ''}${event.deliveryId ? `, delivery ${event.deliveryId}` : ''}, received `}
        <Time at={event.receivedAt} />
      </p>
      <h2>Headers</h2>
      <EventHeaders headers={event.headers} />
      <h2>{`Body (${event.rawBody.length.toLocaleString('en')} bytes)`}</h2>
      <Pre text={props.bodyText} maxChars={BODY_DISPLAY_CHARS} />
      <h2>Jobs</h2>
      {props.jobs.length === 0 ? (
        <p class="muted">No task took this event.</p>
      ) : (
        <JobTable jobs={props.jobs} />
      )}
    </Layout>
  );
}
