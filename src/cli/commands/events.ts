// `mailroom events`: the stored webhooks, newest first, with how many jobs each fanned out
// to, so an event no task took (a filtered `ping`) is found too. One in full: `mailroom event ID`.

import { parseCommandArgs, parseInteger, parseJobId } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { eventSummaryToJson, formatTime, renderTable, writeJson, writeLines } from '../output.js';
import type { EventSummary } from '../../core/types.js';
import type { ListEventsOptions } from '../../mailroom.js';

export interface EventsCliOptions {
  readonly common: CommonOptions;
  readonly filter: ListEventsOptions;
}

/** 50: a screenful; --limit raises it (up to 10,000 per call, then page with --after). */
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 10_000;

const events: CliCommand<EventsCliOptions> = {
  name: 'events',
  summary: 'List stored webhook events, newest first, with their job counts',
  usage: `Usage: mailroom events [--source S] [--type T] [--limit N] [--after ID] [--oldest] [--json]

Lists the webhook events the server stored, newest first, with how many jobs each fanned
out to: an event that created none (a type no task takes, such as a GitHub ping) shows 0.
Headers and body of one event: mailroom event ID.

Options:
  --source S      only events of this source
  --type T        only events of this type (Stripe's type, X-GitHub-Event, …)
  --limit N       at most N events (default ${DEFAULT_LIMIT}, at most ${MAX_LIMIT})
  --after ID      the next page: events after this id in the listing's order
  --oldest        oldest first
  --db URL, --config PATH
  --json          print { "events": [...] }`,

  parse(argv) {
    const { values, common } = parseCommandArgs('events', argv, {
      source: { type: 'string' },
      type: { type: 'string' },
      limit: { type: 'string' },
      after: { type: 'string' },
      oldest: { type: 'boolean' },
    });
    return {
      common,
      filter: {
        source: values.source,
        type: values.type,
        limit: values.limit === undefined ? DEFAULT_LIMIT : parseInteger(values.limit, '--limit', { min: 1, max: MAX_LIMIT }),
        after: values.after === undefined ? undefined : parseJobId(values.after, '--after', 'event'),
        descending: values.oldest !== true,
      },
    };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const found = await mr.listEvents(options.filter);
      const limit = options.filter.limit ?? DEFAULT_LIMIT;
      // As jobs: the --after of the next page, null after the last.
      const nextAfter = found.length === limit ? found[found.length - 1]!.id : null;
      if (options.common.json) {
        writeJson(io.stdout, { events: found.map(eventSummaryToJson), nextAfter });
        return 0;
      }
      writeLines(io.stdout, found.length === 0 ? '(no events match)' : renderEventTable(found));
      if (nextAfter !== null) writeLines(io.stdout, `(first ${limit}; next page: --after ${nextAfter})`);
      return 0;
    });
  },
};

function renderEventTable(rows: readonly EventSummary[]): string {
  return renderTable<EventSummary>(
    [
      { header: 'ID', value: (e) => e.id, align: 'right' },
      { header: 'RECEIVED', value: (e) => formatTime(e.receivedAt) },
      { header: 'SOURCE', value: (e) => e.source, maxWidth: 20 },
      { header: 'TYPE', value: (e) => e.type ?? '-', maxWidth: 40 },
      { header: 'DELIVERY_ID', value: (e) => e.deliveryId ?? '-', maxWidth: 40 },
      { header: 'BYTES', value: (e) => String(e.bodyBytes), align: 'right' },
      { header: 'JOBS', value: (e) => String(e.jobCount), align: 'right' },
    ],
    rows,
  );
}

export default events;
