// `mailroom event ID`: one stored webhook in full: its headers (signatures and credentials
// are never stored, and any the CLI recognises are hidden), its body, and the jobs it
// fanned out to, so "did the ping arrive, and what did it do?" has an answer.

import { CliUsageError, parseCommandArgs, parseJobId } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { boundedBlock, eventToJson, formatTime, indent, jobToJson, renderBody, renderJobTable, visibleHeaders, writeJson, writeLines, renderFields } from '../output.js';
import type { InboundEvent, Job } from '../../core/types.js';
import { noEventMessage } from '../named-ids.js';

export interface EventCliOptions {
  readonly common: CommonOptions;
  readonly id: string;
}

/** A fan-out makes a job per task; more than this on one event is not a fan-out. */
const MAX_JOBS_SHOWN = 1_000;

const event: CliCommand<EventCliOptions> = {
  name: 'event',
  summary: 'Show one stored webhook event: headers, body and its jobs',
  usage: `Usage: mailroom event ID [--json]

Shows a stored webhook event: source, type, delivery id, when it arrived, its headers
(signature and credential headers are never stored or shown), its body, and the jobs it
fanned out to. Event ids are in mailroom events, and on each job (mailroom job ID).

Options:
  --db URL, --config PATH
  --json          print the event with "headers", "body" ("bodyEncoding": utf8 or base64) and "jobs"`,

  parse(argv) {
    const { positionals, common } = parseCommandArgs('event', argv, {}, { maxPositionals: 1 });
    if (positionals[0] === undefined) throw new CliUsageError('Give an event id: mailroom event ID (ids are in `mailroom events`).');
    return { common, id: parseJobId(positionals[0], 'event', 'event') };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const found = await mr.getEvent(options.id);
      if (!found) throw new Error(noEventMessage(options.id));
      const jobs = await mr.listJobs({ eventId: found.id, limit: MAX_JOBS_SHOWN });
      if (options.common.json) writeJson(io.stdout, { ...eventToJson(found), jobs: jobs.map(jobToJson) });
      else writeLines(io.stdout, renderEvent(found, jobs));
      return 0;
    });
  },
};

function renderEvent(stored: InboundEvent, jobs: readonly Job[]): string {
  const fields: Array<[string, string]> = [
    ['id', stored.id],
    ['source', stored.source],
    ['type', stored.type ?? '-'],
    ['delivery id', stored.deliveryId ?? '-'],
    ['received', formatTime(stored.receivedAt)],
    ['body', `${stored.rawBody.length} bytes`],
  ];
  const lines = renderFields(fields);
  const headers = Object.entries(visibleHeaders(stored.headers));
  const nameWidth = Math.max(0, ...headers.map(([name]) => name.length));
  lines.push('', `headers (${headers.length}):`, ...headers.map(([name, value]) => `  ${name.padEnd(nameWidth)}  ${value}`));
  lines.push('', 'body:', boundedBlock(renderBody(stored.rawBody)));
  lines.push('', `jobs (${jobs.length}):`);
  lines.push(jobs.length === 0 ? `  none: no task of source ${stored.source} takes events of type ${stored.type ?? '(none)'}` : indent(renderJobTable(jobs)));
  return lines.join('\n');
}

export default event;
