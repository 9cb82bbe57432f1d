// The first page an operator opens: how much is where, how late the oldest waiting job
// is, how many are dead, which queues are paused (and the forms to pause and resume
// them), and the last hour's finishes and failures. The panel is also
// served alone (/dashboard/live/overview) so the page refreshes it without a reload.

import { formatDurationMs } from '../../core/display-text.js';
import { JOB_STATUSES } from '../../core/types.js';
import type { MailroomStats } from '../../mailroom.js';
import type { JobFinishedPerMinuteResult } from '../../store/store.js';
import { FinishedChart } from './chart.js';
import { ActionForm, href, Time } from './components.js';
import type { PausedQueue } from '../../core/types.js';
import { Layout } from './layout.js';

export interface OverviewData {
  readonly stats: MailroomStats;
  readonly finished: JobFinishedPerMinuteResult;
}

/** How often the page asks for a fresh panel. */
export const OVERVIEW_REFRESH_MS = 5_000;

export function OverviewPanel({ stats, finished, csrfToken }: OverviewData & { readonly csrfToken: string | null }) {
  const paused = new Map(stats.paused.map((p) => [p.queue, p]));
  // A paused queue shows even with no jobs yet (paused before a deploy): its pause is what
  // the operator looks for, and its counts are zero.
  const queues = [...new Set([...Object.keys(stats.byQueue), ...paused.keys()])].sort();
  return (
    <div>
      <section class="cards">
        {JOB_STATUSES.map((status) => (
          <a class={`card status-${status}`} href={href('/jobs', { status })}>
            <span class="count">{stats.byStatus[status].toLocaleString('en')}</span>
            <span class="what">{status}</span>
          </a>
        ))}
        <div class="card">
          <span class="count">{stats.oldestPendingAgeMs > 0 ? formatDurationMs(stats.oldestPendingAgeMs) : '-'}</span>
          <span class="what">oldest due pending</span>
        </div>
      </section>
      <h2>Finished per minute, last hour</h2>
      <FinishedChart minutes={finished.minutes} now={finished.now} />
      {finished.failedAttemptsTruncated ? (
        <p class="muted">Failed attempts count only the newest attempts; more failed this hour than the chart reads.</p>
      ) : null}
      <h2>Queues</h2>
      {paused.size > 0 ? <p class="paused-note">Paused: {[...paused.keys()].join(', ')}. Nothing claims their jobs until they are resumed.</p> : null}
      {queues.length === 0 ? (
        <p class="muted">No jobs yet.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Queue</th>
              {JOB_STATUSES.map((status) => (
                <th class="num">{status}</th>
              ))}
              <th class="num">oldest due pending</th>
              <th>state</th>
            </tr>
          </thead>
          <tbody>
            {queues.map((queue) => (
              <tr>
                <td>
                  <a href={href('/jobs', { queue })}>{queue}</a>
                </td>
                {JOB_STATUSES.map((status) => (
                  <td class="num">
                    <a href={href('/jobs', { queue, status })}>{(stats.byQueue[queue]?.[status] ?? 0).toLocaleString('en')}</a>
                  </td>
                ))}
                <td class="num">{stats.oldestPendingAgeMsByQueue[queue] === undefined ? '-' : formatDurationMs(stats.oldestPendingAgeMsByQueue[queue]!)}</td>
                <td>
                  <QueueState queue={queue} paused={paused.get(queue)} csrfToken={csrfToken} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

/** Running or paused (since when, why), with the form that flips it. */
function QueueState(props: { readonly queue: string; readonly paused: PausedQueue | undefined; readonly csrfToken: string | null }) {
  const { queue, paused, csrfToken } = props;
  if (paused) {
    return (
      <span>
        <span class="status status-paused">paused</span> <Time at={paused.pausedAt} />
        {paused.reason ? <span class="muted"> {paused.reason}</span> : null}{' '}
        <ActionForm action="resume-queue" csrfToken={csrfToken} fields={{ queue }}>
          <button type="submit">Resume</button>
        </ActionForm>
      </span>
    );
  }
  return (
    <ActionForm action="pause-queue" csrfToken={csrfToken} fields={{ queue }}>
      <input type="text" name="reason" placeholder="reason" aria-label={`reason to pause ${queue}`} />
      <button type="submit">Pause</button>
    </ActionForm>
  );
}

export function OverviewPage(props: OverviewData & { readonly csrfToken: string | null }) {
  return (
    <Layout title="Overview" section="overview" csrfToken={props.csrfToken}>
      <h1>Overview</h1>
      <div id="overview" data-refresh="/dashboard/live/overview" data-refresh-ms={String(OVERVIEW_REFRESH_MS)}>
        <OverviewPanel stats={props.stats} finished={props.finished} csrfToken={props.csrfToken} />
      </div>
    </Layout>
  );
}
