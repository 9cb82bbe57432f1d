// `mailroom deliveries --endpoint ID | --message ID [--status S]`: where outgoing messages
// stand at each endpoint (pending, delivered, failed, skipped), with attempts and the last
// error; `mailroom job ID` shows a delivery's attempts with status, duration and excerpt.

import { CliUsageError, parseCommandArgs, parseInteger, parseJobId } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { formatTime, renderTable, writeJson, writeLines } from '../output.js';
import { EndpointNotFoundError, MessageNotFoundError } from '../../core/errors.js';
import { DELIVERY_STATUSES } from '../../core/outgoing-types.js';
import type { Delivery, DeliveryStatus } from '../../core/outgoing-types.js';

export interface DeliveriesCliOptions {
  readonly common: CommonOptions;
  readonly endpointId?: string;
  readonly messageId?: string;
  readonly status?: DeliveryStatus;
  readonly limit: number;
}

const deliveries: CliCommand<DeliveriesCliOptions> = {
  name: 'deliveries',
  summary: 'Outgoing deliveries of one endpoint or one message',
  usage: `Usage: mailroom deliveries [list] --endpoint ID | --message ID [--status S] [--limit N] [--json]

Each delivery of an outgoing message to an endpoint: pending (waiting or being retried),
delivered, failed (attempts used up, or refused for good) or skipped (the endpoint was
disabled; mailroom endpoints recover re-sends it). mailroom job JOB shows its attempts.

Options:
  --endpoint ID     one endpoint's deliveries
  --message ID      one message's deliveries
  --status S        ${DELIVERY_STATUSES.join(' | ')}
  --limit N         at most N (default 100)
  --db URL, --config PATH
  --json            print JSON`,

  parse(argv) {
    const { values, common, positionals } = parseCommandArgs(
      'deliveries',
      argv,
      { endpoint: { type: 'string' }, message: { type: 'string' }, status: { type: 'string' }, limit: { type: 'string' } },
      { maxPositionals: 1 },
    );
    // `list` is taken, as `mailroom endpoints list` has it: the one thing this command does.
    if (positionals[0] !== undefined && positionals[0] !== 'list') {
      throw new CliUsageError(`Unexpected argument "${positionals[0]}". Run \`mailroom deliveries --help\`.`);
    }
    if ((values.endpoint === undefined) === (values.message === undefined)) throw new CliUsageError('Give one of --endpoint ID or --message ID.');
    if (values.status !== undefined && !DELIVERY_STATUSES.includes(values.status as DeliveryStatus)) {
      throw new CliUsageError(`--status takes one of ${DELIVERY_STATUSES.join(', ')}, not "${values.status}".`);
    }
    return {
      common,
      endpointId: values.endpoint === undefined ? undefined : parseJobId(values.endpoint, '--endpoint', 'endpoint'),
      messageId: values.message === undefined ? undefined : parseJobId(values.message, '--message', 'message'),
      status: values.status as DeliveryStatus | undefined,
      limit: values.limit === undefined ? 100 : parseInteger(values.limit, '--limit', { min: 1, max: 10_000 }),
    };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const list = await mr.deliveries.list({ endpointId: options.endpointId, messageId: options.messageId, status: options.status, limit: options.limit });
      // An empty list for an endpoint that does not exist is a typo, not an answer.
      if (list.length === 0 && options.endpointId !== undefined && !(await mr.endpoints.get(options.endpointId))) throw new EndpointNotFoundError(options.endpointId);
      if (list.length === 0 && options.messageId !== undefined && !(await mr.messages.get(options.messageId))) throw new MessageNotFoundError(options.messageId);
      if (options.common.json) {
        writeJson(io.stdout, list.map((d) => ({ ...d, createdAt: d.createdAt.toISOString(), updatedAt: d.updatedAt.toISOString() })));
        return 0;
      }
      if (list.length === 0) {
        writeLines(io.stdout, 'No deliveries match.');
        return 0;
      }
      writeLines(
        io.stdout,
        renderTable<Delivery>(
          [
            { header: 'ID', value: (d) => d.id },
            { header: 'MESSAGE', value: (d) => d.messageId },
            { header: 'ENDPOINT', value: (d) => d.endpointId },
            { header: 'TYPE', value: (d) => d.type, maxWidth: 32 },
            { header: 'STATUS', value: (d) => d.status },
            { header: 'ATTEMPTS', value: (d) => String(d.attempts) },
            { header: 'JOB', value: (d) => d.jobId ?? '-' },
            { header: 'UPDATED', value: (d) => formatTime(d.updatedAt) },
            { header: 'LAST ERROR', value: (d) => d.lastError ?? '', maxWidth: 60 },
          ],
          list,
        ),
      );
      return 0;
    });
  },
};

export default deliveries;
