// The first page an operator opens: how much is where, how late the oldest waiting job
// is, how many are dead, and the last hour's finishes and failures. The panel is also
// served alone (/dashboard/live/overview) so the page refreshes it without a reload.

import { formatDurationMs } from '../../core/display-text.js';
import { JOB_STATUSES } from '../../core/types.js';
import type { MailroomStats } from '../../mailroom.js';
import type { JobFinishedPerMinuteResult } from '../../store/store.js';
import { FinishedChart } from './chart.js';
import { href } from './components.js';
import { Layout } from './layout.js';

export interface OverviewData {
  readonly stats: MailroomStats;
  readonly finished: JobFinishedPerMinuteResult;
}

/** How often the page asks for a fresh panel. */
export const OVERVIEW_REFRESH_MS = 5_000;

export function OverviewPanel({ stats, finished }: OverviewData) {
  const queues = Object.keys(stats.byQueue).sort();
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
      {/* Paused queues join this table once queue pausing (issue 14) lands in the facade. */}
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
                    <a href={href('/jobs', { queue, status })}>{stats.byQueue[queue]![status].toLocaleString('en')}</a>
                  </td>
                ))}
                <td class="num">{stats.oldestPendingAgeMsByQueue[queue] === undefined ? '-' : formatDurationMs(stats.oldestPendingAgeMsByQueue[queue]!)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

export function OverviewPage(props: OverviewData & { readonly csrfToken: string | null }) {
  return (
    <Layout title="Overview" section="overview" csrfToken={props.csrfToken}>
      <h1>Overview</h1>
      <div id="overview" data-refresh="/dashboard/live/overview" data-refresh-ms={String(OVERVIEW_REFRESH_MS)}>
        <OverviewPanel stats={props.stats} finished={props.finished} />
      </div>
    </Layout>
  );
}
