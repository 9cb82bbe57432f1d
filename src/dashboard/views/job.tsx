// One job, all of it: what it was given, where it came from (the inbound event, headers
// with secrets hidden), what it returned, its progress and its batch's, every attempt with
// its error, stack, duration and details, the replays, and the actions its status allows.

import { displayTime, formatDurationMs } from '../../core/display-text.js';
import type { Attempt, Batch, InboundEvent, JobDetail, Replay } from '../../core/types.js';
import { ActionForm, Clip, href, Json, Pre, StatusBadge, Time } from './components.js';
import { EventHeaders } from './event.js';
import { Layout } from './layout.js';

export function JobPage(props: {
  readonly job: JobDetail;
  /** Payload, result and details as shown (redacted). */
  readonly shown: { readonly payload: unknown; readonly result: unknown; readonly details: readonly unknown[] };
  readonly event: InboundEvent | null;
  /** The batch the job is a child of, or completes; null for neither (or purged). */
  readonly batch: Batch | null;
  readonly csrfToken: string | null;
  /** What an action just did, shown once (`?done=replayed`). */
  readonly notice?: string;
}) {
  const { job } = props;
  return (
    <Layout title={`Job ${job.id}`} section="jobs" csrfToken={props.csrfToken}>
      <h1>
        {`Job ${job.id} `}
        <StatusBadge status={job.status} deadReason={job.deadReason} />
      </h1>
      {props.notice ? <p class="notice">{props.notice}</p> : null}
      <JobActions job={job} csrfToken={props.csrfToken} />
      <table class="facts">
        <tbody>
          <Fact name="Type">{job.type}</Fact>
          <Fact name="Queue">{job.queue}</Fact>
          <Fact name="Attempts">{`${job.attempts} of ${job.maxAttempts}${job.snoozes > 0 ? `, snoozed ${job.snoozes} times` : ''}`}</Fact>
          <Fact name="Priority">{String(job.priority)}</Fact>
          <Fact name="Key">{job.key ?? '-'}</Fact>
          <Fact name="Group">{job.group ?? '-'}</Fact>
          <Fact name="Enqueued">
            <Time at={job.createdAt} />
          </Fact>
          <Fact name="Runs at">
            <Time at={job.runAt} />
          </Fact>
          <Fact name="Finished">
            <Time at={job.finishedAt} />
          </Fact>
          {job.progress ? <Fact name="Progress">{`${Math.round(job.progress.fraction * 100)} %${job.progress.note ? `: ${job.progress.note}` : ''}`}</Fact> : null}
          {props.batch ? (
            <Fact name={job.completesBatchId ? 'Completes batch' : 'Batch'}>
              <a href={href(`/jobs?batch=${encodeURIComponent(props.batch.id)}`)}>{props.batch.id}</a>
              {`: ${props.batch.done + props.batch.dead} of ${props.batch.total} ended (${props.batch.done} done, ${props.batch.dead} dead)`}
            </Fact>
          ) : null}
          {job.status === 'running' ? <Fact name="Running on">{`${job.leaseOwner ?? '-'}, lease until ${job.leaseExpiresAt ? displayTime(job.leaseExpiresAt) : '-'}`}</Fact> : null}
          <Fact name="Last error">
            <span class="error-text">{job.lastError ?? '-'}</span>
          </Fact>
        </tbody>
      </table>
      <h2>Payload</h2>
      {job.payload === null && props.event !== null ? <p class="muted">{`The body of event ${props.event.id}, as the handler gets it:`}</p> : null}
      <Json value={props.shown.payload} />
      <h2>Result</h2>
      <Json value={props.shown.result} />
      <h2>Attempts</h2>
      <AttemptTimeline attempts={job.attemptsLog} details={props.shown.details} replays={job.replays} />
      <h2>Replays</h2>
      {job.replays.length === 0 ? (
        <p class="muted">Never replayed.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>At</th>
              <th>By</th>
              <th>Reason</th>
            </tr>
          </thead>
          <tbody>
            {job.replays.map((replay) => (
              <tr>
                <td>
                  <Time at={replay.at} />
                </td>
                <td>{replay.by ?? '-'}</td>
                <td>{replay.reason ?? '-'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Inbound event</h2>
      {props.event === null ? (
        <p class="muted">{job.eventId === null ? 'Enqueued by code, not by a webhook.' : `Event ${job.eventId} is no longer stored.`}</p>
      ) : (
        <>
          <p>
            <a href={href(`/events/${props.event.id}`)}>{`Event ${props.event.id}`}</a>
            {` from ${props.event.source}${props.event.type ? `, type ${props.event.type}` : ''}, received `}
            <Time at={props.event.receivedAt} />
          </p>
          <EventHeaders headers={props.event.headers} />
        </>
      )}
    </Layout>
  );
}

function Fact(props: { readonly name: string; readonly children: preact.ComponentChildren }) {
  return (
    <tr>
      <th>{props.name}</th>
      <td>{props.children}</td>
    </tr>
  );
}

function JobActions(props: { readonly job: JobDetail; readonly csrfToken: string | null }) {
  const { job, csrfToken } = props;
  if (job.status === 'running') return <p class="muted">Running now; no action until it finishes.</p>;
  if (job.status === 'pending') {
    return (
      <div class="actions">
        <ActionForm action="retry-now" csrfToken={csrfToken} fields={{ id: job.id }}>
          <button type="submit">Run now</button>
        </ActionForm>
        <ActionForm action="cancel" csrfToken={csrfToken} fields={{ id: job.id }}>
          <input name="reason" placeholder="reason (optional)" maxLength={500} />
          <button type="submit" class="danger">
            Cancel
          </button>
        </ActionForm>
      </div>
    );
  }
  return (
    <div class="actions">
      <ActionForm action="replay" csrfToken={csrfToken} fields={{ id: job.id, force: job.status === 'done' ? '1' : undefined }}>
        <input name="reason" placeholder="reason (required)" required maxLength={500} />
        <label>
          <input type="checkbox" name="confirm" value="yes" required /> {job.status === 'done' ? 'run it again: its side effects repeat' : 'replay this job'}
        </label>
        <button type="submit">{job.status === 'done' ? 'Run again' : 'Replay'}</button>
      </ActionForm>
    </div>
  );
}

/**
 * The attempts in order, with each replay where it happened: attempt numbers start again
 * after a replay, and without the marker a replayed job showed "Attempt 1" twice with
 * nothing between. Replays recorded without their place (attemptsBefore null, an older
 * release) are only in the Replays table.
 */
function AttemptTimeline(props: { readonly attempts: readonly Attempt[]; readonly details: readonly unknown[]; readonly replays: readonly Replay[] }) {
  const replaysAfter = (count: number) =>
    props.replays
      .filter((replay) => replay.attemptsBefore === count)
      .map((replay) => (
        <li class="replayed">
          <strong>Replayed</strong>
          {' · '}
          <Time at={replay.at} />
          {replay.by ? ` · by ${replay.by}` : ''}
          {replay.reason ? ` · ${replay.reason}` : ''}
        </li>
      ));
  if (props.attempts.length === 0 && !props.replays.some((replay) => replay.attemptsBefore === 0)) return <p class="muted">No attempt yet.</p>;
  return (
    <ol class="timeline">
      {props.attempts.map((attempt, i) => (
        <>
          {replaysAfter(i)}
          <li class={`outcome-${attempt.outcome}`}>
            <div>
              <strong>{`Attempt ${attempt.attempt}: ${attempt.outcome}`}</strong>
              {' · '}
              <Time at={attempt.startedAt} />
              {attempt.startedAt && attempt.finishedAt ? ` · took ${formatDurationMs(attempt.finishedAt.getTime() - attempt.startedAt.getTime())}` : ''}
              {attempt.workerId ? ` · ${attempt.workerId}` : ''}
            </div>
            {attempt.error ? (
              <p class="error-text">
                <Clip text={attempt.error} max={2_000} />
              </p>
            ) : null}
            {attempt.stack ? (
              <details>
                <summary>Stack</summary>
                <Pre text={attempt.stack} maxChars={16 * 1024} />
              </details>
            ) : null}
            {props.details[i] === null || props.details[i] === undefined ? null : (
              <details open>
                <summary>Details</summary>
                <Json value={props.details[i]} maxChars={16 * 1024} />
              </details>
            )}
          </li>
        </>
      ))}
      {replaysAfter(props.attempts.length)}
    </ol>
  );
}
