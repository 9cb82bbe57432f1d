// The job list: filters as a GET form (a filtered view is a link to share), newest first,
// keyset-paginated by id, and the way into replaying every dead job a filter matches.

import { JOB_STATUSES } from '../../core/types.js';
import type { Job } from '../../core/types.js';
import { Clip, FilterField, href, IdCell, StatusBadge, TableHead, Time } from './components.js';
import { Layout } from './layout.js';

/** The list's filters as the query string carries them (every one optional). */
export interface JobsQuery {
  readonly status?: string;
  readonly type?: string;
  readonly queue?: string;
  readonly source?: string;
  /** Case-insensitive substring of the last error. */
  readonly error?: string;
  /** Only the children of this batch. */
  readonly batch?: string;
  /** Only jobs enqueued before this time (ISO 8601, or `YYYY-MM-DDTHH:MM` from the form, UTC). */
  readonly before?: string;
  /** Keyset cursor: jobs with smaller ids than this. */
  readonly after?: string;
}

export function JobsPage(props: {
  readonly query: JobsQuery;
  readonly jobs: readonly Job[];
  /** The cursor of the next page, or null on the last one. */
  readonly nextAfter: string | null;
  /** The search stopped for time at `nextAfter` rather than filling the page. */
  readonly searchStopped: boolean;
  readonly csrfToken: string | null;
}) {
  const { query } = props;
  const filters = { status: query.status, type: query.type, queue: query.queue, source: query.source, error: query.error, batch: query.batch, before: query.before };
  return (
    <Layout title="Jobs" section="jobs" csrfToken={props.csrfToken}>
      <h1>Jobs</h1>
      <form method="get" action={href('/jobs')} class="filters">
        <label>
          Status
          <select name="status">
            <option value="">any</option>
            {JOB_STATUSES.map((status) => (
              <option value={status} selected={query.status === status}>
                {status}
              </option>
            ))}
          </select>
        </label>
        <FilterField label="Type" name="type" value={query.type} />
        <FilterField label="Queue" name="queue" value={query.queue} />
        <FilterField label="Source" name="source" value={query.source} />
        <label>
          Error contains <input name="error" value={query.error ?? ''} type="search" />
        </label>
        <FilterField label="Batch" name="batch" value={query.batch} />
        <FilterField label="Enqueued before (UTC)" name="before" value={query.before} placeholder="2026-01-31T23:59" />
        <button type="submit">Filter</button> <a href={href('/jobs')}>Clear</a>
      </form>
      {query.status === 'dead' && (props.jobs.length > 0 || props.searchStopped) ? (
        <p>
          <a class="button" href={href('/replay', { type: query.type, queue: query.queue, source: query.source, error: query.error, batch: query.batch, before: query.before })}>
            Replay every dead job matching these filters…
          </a>
        </p>
      ) : null}
      {props.jobs.length === 0 ? (
        <p class="muted">{props.searchStopped ? `No match among the newest jobs searched so far (down to id ${props.nextAfter}).` : 'No jobs match.'}</p>
      ) : (
        <JobTable jobs={props.jobs} />
      )}
      {props.nextAfter === null ? null : (
        <p>
          <a href={href('/jobs', { ...filters, after: props.nextAfter })} rel="next">
            {props.searchStopped ? `Search older jobs (below id ${props.nextAfter}) →` : 'Older jobs →'}
          </a>
        </p>
      )}
    </Layout>
  );
}

/** Jobs as the list shows them, one row each, linking to each job's page. */
export function JobTable(props: { readonly jobs: readonly Job[] }) {
  return (
    <table class="jobs">
      <TableHead columns={[{ num: 'ID' }, 'Status', 'Queue', 'Type', { num: 'Attempts' }, 'Enqueued', 'Source', 'Last error']} />
      <tbody>
        {props.jobs.map((job) => (
          <tr>
            <IdCell kind="jobs" id={job.id} />
            <td>
              <StatusBadge status={job.status} deadReason={job.deadReason} />
            </td>
            <td>{job.queue}</td>
            <td>{job.type}</td>
            <td class="num">{`${job.attempts}/${job.maxAttempts}`}</td>
            <td>
              <Time at={job.createdAt} />
            </td>
            <td>{job.source ?? '-'}</td>
            <td class="error-text">
              <Clip text={job.lastError} max={100} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
