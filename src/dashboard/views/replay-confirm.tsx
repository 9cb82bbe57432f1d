// The confirmation step before replaying every dead job a filter matches: what will be
// replayed (the filter, and the first matches), a required reason, and one more click.

import type { Job } from '../../core/types.js';
import { ActionForm, Clip, href } from './components.js';
import { Layout } from './layout.js';

export interface ReplayFilterQuery {
  readonly type?: string;
  readonly source?: string;
  readonly error?: string;
  /**
   * Filters of the jobs list that a replay cannot narrow by (queue, batch, enqueued
   * before): the store's replay filter has none of them, so a replay asked with any of
   * them is refused rather than widened to every dead job.
   */
  readonly unsupported: readonly string[];
}

/** The jobs list's filters a replay cannot apply. */
export const REPLAY_UNSUPPORTED_FILTERS = ['queue', 'batch', 'before'] as const;

export function ReplayConfirmPage(props: {
  readonly filter: ReplayFilterQuery;
  /** The first matching dead jobs, newest first. */
  readonly sample: readonly Job[];
  /** True when more may match than the sample shows (the sample is one bounded page). */
  readonly more: boolean;
  readonly csrfToken: string | null;
}) {
  const { filter } = props;
  const described = [
    filter.type ? `type is "${filter.type}"` : null,
    filter.source ? `source is "${filter.source}"` : null,
    filter.error ? `last error contains "${filter.error}"` : null,
  ].filter((part): part is string => part !== null);
  return (
    <Layout title="Replay dead jobs" section="jobs" csrfToken={props.csrfToken}>
      <h1>Replay dead jobs</h1>
      {filter.unsupported.length > 0 ? (
        <p class="error-text">
          A replay cannot be narrowed by {filter.unsupported.join(', ')}.{' '}
          <a href={href('/jobs', { status: 'dead', type: filter.type, source: filter.source, error: filter.error })}>List the dead jobs without {filter.unsupported.length === 1 ? 'that filter' : 'those filters'}</a> to replay them.
        </p>
      ) : (
        <>
          <p>{`Every dead job${described.length === 0 ? '' : ` whose ${described.join(' and ')}`} goes back to pending with a fresh attempt budget. Cancelled jobs are left alone.`}</p>
          <p>{props.sample.length === 0 ? (props.more ? 'None of the newest dead jobs match; older ones may.' : 'No dead job matches now.') : `${props.more ? 'At least ' : ''}${props.sample.length} match, among them:`}</p>
          <ul>
            {props.sample.slice(0, 10).map((job) => (
              <li>
                <a href={href(`/jobs/${job.id}`)}>{job.id}</a> {job.type}: <Clip text={job.lastError} max={100} />
              </li>
            ))}
          </ul>
          <ActionForm action="replay-filtered" csrfToken={props.csrfToken} fields={{ type: filter.type, source: filter.source, error: filter.error }} class="confirm">
            <label>
              Reason <input name="reason" required maxLength={500} placeholder="e.g. fixed the SMTP credentials" />
            </label>
            <label>
              <input type="checkbox" name="confirm" value="yes" required /> replay them all
            </label>
            <button type="submit">Replay</button>
          </ActionForm>
        </>
      )}
    </Layout>
  );
}
