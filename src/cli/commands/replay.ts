// `mailroom replay`: put dead jobs back to pending with a fresh attempt budget: one by id,
// a filtered set, or all of them. History is kept and the replay is recorded (when, why,
// by whom), so `mailroom job ID` shows what happened.

import { CliUsageError, parseCommandArgs, parseInteger, parseJobId } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { writeJson, writeLines } from '../output.js';
import { JobStateError } from '../../core/errors.js';
import type { Mailroom, ReplayOptions, ReplayResult, ReplayTarget } from '../../mailroom.js';
import { assertNamedIdsExist } from '../named-ids.js';

export interface ReplayCliOptions {
  readonly common: CommonOptions;
  readonly target: ReplayTarget;
  /** --event with --force: also replay the event's done jobs. */
  readonly alsoDone: boolean;
  readonly replay: ReplayOptions;
}

const replay: CliCommand<ReplayCliOptions> = {
  name: 'replay',
  summary: 'Replay dead jobs (one, a filtered set, or all)',
  usage: `Usage: mailroom replay (--id N | --all-dead | --type T | --error TEXT | --source S | --event ID)
                       [--include-cancelled] [--reason R] [--by NAME] [--max-attempts N] [--force] [--json]

Moves dead jobs back to pending, due now, with attempts reset; their history is kept and
the replay is recorded. Filters combine: --type send_email --error "550" replays dead
send_email jobs whose last error mentions 550.

Options:
  --id N              one job (dead, or done with --force)
  --all-dead          every dead job (cancelled ones included)
  --type T            dead jobs of this type (a filter leaves cancelled jobs out)
  --error TEXT        dead jobs whose last error contains TEXT
  --source S          dead jobs from this webhook source
  --include-cancelled a filter takes cancelled jobs too (mailroom dead lists them as dead(cancelled))
  --event ID          the dead jobs of one stored event (with --force, its done jobs too)
  --reason R          why, recorded with the replay (recommended)
  --by NAME           who, recorded (default: $USER, else "cli")
  --max-attempts N    a new attempt budget (default: each job keeps its own)
  --force             allow replaying done jobs (with --id or --event)
  --db URL, --config PATH
  --json              print { "count": N, "ids": [...] }`,

  parse(argv, io) {
    const { values, common } = parseCommandArgs('replay', argv, {
      id: { type: 'string' },
      'all-dead': { type: 'boolean' },
      type: { type: 'string' },
      error: { type: 'string' },
      source: { type: 'string' },
      event: { type: 'string' },
      reason: { type: 'string' },
      by: { type: 'string' },
      'max-attempts': { type: 'string' },
      force: { type: 'boolean' },
      'include-cancelled': { type: 'boolean' },
    });
    const isFiltered = values.type !== undefined || values.error !== undefined || values.source !== undefined || values.event !== undefined;
    const force = values.force === true;
    const by = values.by ?? io.env.USER ?? io.env.LOGNAME ?? 'cli';
    const replayOptions: ReplayOptions = {
      reason: values.reason,
      by,
      force,
      maxAttempts: values['max-attempts'] === undefined ? undefined : parseInteger(values['max-attempts'], '--max-attempts', { min: 1, max: 1_000 }),
    };
    if (values.id !== undefined) {
      if (isFiltered || values['all-dead']) throw new CliUsageError('--id replays one job; do not combine it with --all-dead or filters.');
      return { common, target: { id: parseJobId(values.id, '--id') }, alsoDone: false, replay: replayOptions };
    }
    if (!isFiltered && !values['all-dead']) {
      throw new CliUsageError('Say what to replay: --id N, --all-dead, or a filter (--type, --error, --source, --event). See `mailroom replay --help`.');
    }
    if (force && values.event === undefined) throw new CliUsageError('--force applies to --id or --event only; replaying every done job by filter is refused.');
    return {
      common,
      target: {
        status: 'dead',
        type: values.type,
        errorContains: values.error,
        source: values.source,
        eventId: values.event === undefined ? undefined : parseJobId(values.event, '--event', 'event'),
      },
      alsoDone: force,
      // --all-dead means all: cancelled jobs too (an operator asking for everything back).
      replay: { ...replayOptions, includeCancelled: values['all-dead'] === true || values.event !== undefined || values['include-cancelled'] === true },
    };
  },

  async run(options, io) {
    // Replays only what exists: a mistyped --db must not create (and migrate) a new file.
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      let result: ReplayResult = await mr.replay(options.target, options.replay).catch((error: unknown) => {
        throw withCliAdvice(error);
      });
      if (options.alsoDone && 'status' in options.target) {
        const done = await mr.replay({ ...options.target, status: 'done' }, { ...options.replay, force: true });
        result = { count: result.count + done.count, ids: [...result.ids, ...done.ids] };
      }
      if (result.count === 0 && 'status' in options.target) await assertNamedIdsExist(mr, options.target);
      if (options.common.json) {
        writeJson(io.stdout, { count: result.count, ids: result.ids });
      } else if (result.count === 0) {
        const filter = 'status' in options.target ? options.target : undefined;
        // A filter leaves cancelled jobs out, while `mailroom dead` lists them: say so when that is why.
        const cancelled = filter && !options.replay.includeCancelled ? await cancelledMatching(mr, filter) : 0;
        // "Re-run the whole webhook" of an event whose jobs all succeeded needs --force: say so,
        // counting the done jobs --force would replay (the same filter: --type, --source, --error).
        const eventId = filter?.eventId;
        const done = cancelled === 0 && filter && eventId !== undefined && !options.alsoDone ? await doneMatching(mr, filter) : 0;
        const isNarrowed = filter !== undefined && (filter.type !== undefined || filter.source !== undefined || filter.errorContains !== undefined);
        writeLines(
          io.stdout,
          cancelled > 0
            ? `No jobs matched but ${cancelled} cancelled one${cancelled === 1 ? '' : 's'}, which a filter leaves out; nothing replayed. Add --include-cancelled to replay ${cancelled === 1 ? 'it' : 'them'}.`
            : done > 0
              ? `Event ${eventId} has no dead jobs${isNarrowed ? ' that match' : ''}, and ${done} done one${done === 1 ? '' : 's'}${isNarrowed ? ` that ${done === 1 ? 'does' : 'do'}` : ''}; nothing replayed. Add --force to run ${done === 1 ? 'it' : 'them'} again (side effects repeat).`
              : 'No jobs matched; nothing replayed. (List dead jobs: mailroom dead)',
        );
      } else {
        const shown = result.ids.length > 20 ? `${result.ids.slice(0, 20).join(', ')}, …` : result.ids.join(', ');
        writeLines(io.stdout, `Replayed ${result.count} job${result.count === 1 ? '' : 's'}: ${shown}.`);
      }
      return 0;
    });
  },
};

/** How many cancelled dead jobs the filter matches (at most 1,000 counted). */
async function cancelledMatching(mr: Mailroom, filter: Extract<ReplayTarget, { status: unknown }>): Promise<number> {
  const dead = await mr.listJobs({ ...listFilter(filter), status: 'dead', limit: 1_000 });
  return dead.filter((job) => job.deadReason === 'cancelled').length;
}

/** How many done jobs the filter matches: what --force would replay too (at most 1,000 counted). */
async function doneMatching(mr: Mailroom, filter: Extract<ReplayTarget, { status: unknown }>): Promise<number> {
  return (await mr.listJobs({ ...listFilter(filter), status: 'done', limit: 1_000 })).length;
}

/** A replay filter as a job listing's. */
function listFilter(filter: Extract<ReplayTarget, { status: unknown }>) {
  return { type: filter.type, source: filter.source, eventId: filter.eventId, errorContains: filter.errorContains };
}

/** The library's advice names its API (`{ force: true }`, retryNow); an operator types commands. */
function withCliAdvice(error: unknown): unknown {
  if (!(error instanceof JobStateError)) return error;
  if (error.status === 'done') return new JobStateError(error.jobId, 'done', error.operation, 'Add --force to run it again (its side effects repeat).');
  if (error.status === 'pending') {
    return new JobStateError(error.jobId, 'pending', error.operation, `It runs on its own; to run it now: mailroom retry --id ${error.jobId}.`);
  }
  return error;
}

export default replay;
