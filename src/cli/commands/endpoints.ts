// `mailroom endpoints add|list|get|update|disable|enable|rotate-secret|recover|remove`:
// outgoing-webhook endpoints of your tenants. `add` and `rotate-secret` print the signing
// secret once, for the customer; nothing else ever prints it. `get` shows the health.

import { CliUsageError, parseCommandArgs, parseDurationMs, parseIsoDate, parseJobId, parseList } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { formatTime, renderTable, writeJson, writeLines } from '../output.js';
import type { Endpoint, EndpointHealth } from '../../core/outgoing-types.js';

const ACTIONS = ['add', 'list', 'get', 'update', 'disable', 'enable', 'rotate-secret', 'recover', 'remove'] as const;
type Action = (typeof ACTIONS)[number];

export interface EndpointsCliOptions {
  readonly common: CommonOptions;
  readonly action: Action;
  readonly id?: string;
  readonly tenant?: string;
  readonly url?: string;
  readonly eventTypes?: string[];
  readonly description?: string;
  readonly reason?: string;
  readonly overlapMs?: number;
  readonly since?: Date;
}

const endpoints: CliCommand<EndpointsCliOptions> = {
  name: 'endpoints',
  summary: 'Outgoing webhook endpoints: add, list, get (with health), disable, enable, rotate-secret, recover',
  usage: `Usage: mailroom endpoints add --tenant T --url URL [--events a,b] [--description D] [--json]
       mailroom endpoints list [--tenant T] [--json]
       mailroom endpoints get ID [--json]
       mailroom endpoints update ID [--url URL] [--events a,b] [--description D] [--json]
       mailroom endpoints disable ID [--reason R] | enable ID | remove ID
       mailroom endpoints rotate-secret ID [--overlap 24h] [--json]
       mailroom endpoints recover ID --since (2030-01-01T00:00:00Z | 24h) [--json]

Endpoints are your customers' receivers of outgoing webhooks (mr.publish). add prints the
signing secret (whsec_…) once: hand it to the customer, Mailroom never shows it again.
rotate-secret prints a new one; the old one keeps signing beside it for --overlap.
get shows the endpoint's health: success rate, last success and failure, breaker, backlog.
recover sends its failed and skipped deliveries since a time again (enable it first).

Options:
  --tenant T        the customer's id
  --url URL         http(s) URL; refused if it resolves to a private or local address
  --events a,b      event types it receives (default: every type)
  --description D
  --reason R        why it is disabled (disable)
  --overlap DUR     how long the old secret keeps signing (rotate-secret; default 24h)
  --since TIME|DUR  an ISO time, or a duration back from now (recover)
  --db URL, --config PATH
  --json            print JSON`,

  parse(argv) {
    const { values, positionals, common } = parseCommandArgs(
      'endpoints',
      argv,
      {
        tenant: { type: 'string' },
        url: { type: 'string' },
        events: { type: 'string' },
        description: { type: 'string' },
        reason: { type: 'string' },
        overlap: { type: 'string' },
        since: { type: 'string' },
      },
      { maxPositionals: 2 },
    );
    const [action, id] = positionals;
    if (!ACTIONS.includes(action as Action)) throw new CliUsageError(`Say what to do: mailroom endpoints ${ACTIONS.join('|')}.`);
    const needsId = action !== 'add' && action !== 'list';
    if (needsId && id === undefined) throw new CliUsageError(`Give the endpoint: mailroom endpoints ${action} ID (mailroom endpoints list shows ids).`);
    if (!needsId && id !== undefined) throw new CliUsageError(`mailroom endpoints ${action} takes no id.`);
    if (action === 'add' && (values.tenant === undefined || values.url === undefined)) {
      throw new CliUsageError('mailroom endpoints add needs --tenant T and --url URL.');
    }
    if (action === 'recover' && values.since === undefined) throw new CliUsageError('mailroom endpoints recover needs --since (an ISO time, or a duration such as 24h).');
    return {
      common,
      action: action as Action,
      id: id === undefined ? undefined : parseJobId(id, 'ID'),
      tenant: values.tenant,
      url: values.url,
      eventTypes: values.events === undefined ? undefined : parseList(values.events, '--events'),
      description: values.description,
      reason: values.reason,
      overlapMs: values.overlap === undefined ? undefined : parseDurationMs(values.overlap, '--overlap'),
      since: values.since === undefined ? undefined : parseSince(values.since),
    };
  },

  async run(options, io) {
    return withCliMailroom(options.common, io, { migrate: false }, async ({ mr }) => {
      const json = options.common.json;
      const id = options.id!;
      switch (options.action) {
        case 'add': {
          const added = await mr.endpoints.add({ tenant: options.tenant!, url: options.url!, eventTypes: options.eventTypes, description: options.description });
          if (json) writeJson(io.stdout, { ...endpointToJson(added), secret: added.secret });
          else writeLines(io.stdout, `Added endpoint ${added.id} for ${added.tenant}: ${added.url}`, `Signing secret (shown once; give it to the customer): ${added.secret}`);
          return 0;
        }
        case 'list': {
          const list = await mr.endpoints.list({ tenant: options.tenant, limit: 10_000 });
          if (json) writeJson(io.stdout, list.map(endpointToJson));
          else writeLines(io.stdout, list.length === 0 ? 'No endpoints yet: mailroom endpoints add --tenant T --url URL.' : renderEndpoints(list));
          return 0;
        }
        case 'get': {
          const endpoint = await mr.endpoints.get(id);
          if (!endpoint) return notFound(io, id);
          const health = await mr.endpoints.health(id);
          if (json) writeJson(io.stdout, { ...endpointToJson(endpoint), health: healthToJson(health) });
          else writeLines(io.stdout, renderEndpoint(endpoint, health));
          return 0;
        }
        case 'update': {
          const updated = await mr.endpoints.update(id, { url: options.url, eventTypes: options.eventTypes, description: options.description });
          if (json) writeJson(io.stdout, endpointToJson(updated));
          else writeLines(io.stdout, `Updated endpoint ${updated.id}.`);
          return 0;
        }
        case 'disable':
        case 'enable': {
          const changed = options.action === 'disable' ? await mr.endpoints.disable(id, options.reason) : await mr.endpoints.enable(id);
          if (json) writeJson(io.stdout, endpointToJson(changed));
          else writeLines(io.stdout, changed.enabled ? `Enabled endpoint ${id}; mailroom endpoints recover ${id} --since … re-sends what it missed.` : `Disabled endpoint ${id}: messages for it are recorded as skipped.`);
          return 0;
        }
        case 'remove': {
          await mr.endpoints.remove(id);
          if (json) writeJson(io.stdout, { id, removed: true });
          else writeLines(io.stdout, `Removed endpoint ${id}; its deliveries stay listed.`);
          return 0;
        }
        case 'rotate-secret': {
          const { secret } = await mr.endpoints.rotateSecret(id, { overlapMs: options.overlapMs });
          if (json) writeJson(io.stdout, { id, secret });
          else writeLines(io.stdout, `New signing secret for endpoint ${id} (shown once): ${secret}`, 'The old one keeps signing beside it until the overlap ends.');
          return 0;
        }
        case 'recover': {
          const result = await mr.endpoints.recover(id, { since: options.since! });
          if (json) writeJson(io.stdout, result);
          else writeLines(io.stdout, `Sending ${result.count} deliver${result.count === 1 ? 'y' : 'ies'} to endpoint ${id} again.`);
          return 0;
        }
      }
    });
  },
};

export default endpoints;

/** `--since`: an ISO time, or a duration back from now. */
function parseSince(text: string): Date {
  return /^\d{4}-\d{2}-\d{2}/.test(text) ? parseIsoDate(text, '--since') : new Date(Date.now() - parseDurationMs(text, '--since'));
}

function notFound(io: { stderr: NodeJS.WritableStream }, id: string): number {
  io.stderr.write(`mailroom endpoints: no endpoint ${id}; mailroom endpoints list shows them.\n`);
  return 1;
}

/** An endpoint as JSON: every field but a secret, which it does not have. */
export function endpointToJson(endpoint: Endpoint): Record<string, unknown> {
  return {
    id: endpoint.id,
    tenant: endpoint.tenant,
    url: endpoint.url,
    description: endpoint.description,
    eventTypes: endpoint.eventTypes,
    enabled: endpoint.enabled,
    disabledReason: endpoint.disabledReason,
    rateLimit: endpoint.rateLimit,
    metadata: endpoint.metadata,
    createdAt: endpoint.createdAt.toISOString(),
    updatedAt: endpoint.updatedAt.toISOString(),
  };
}

function healthToJson(health: EndpointHealth): Record<string, unknown> {
  return {
    ...health,
    lastSuccessAt: health.lastSuccessAt?.toISOString() ?? null,
    lastFailureAt: health.lastFailureAt?.toISOString() ?? null,
    failingSince: health.failingSince?.toISOString() ?? null,
    breakerRetryAt: health.breakerRetryAt?.toISOString() ?? null,
  };
}

function renderEndpoints(list: readonly Endpoint[]): string {
  return renderTable<Endpoint>(
    [
      { header: 'ID', value: (e) => e.id },
      { header: 'TENANT', value: (e) => e.tenant, maxWidth: 24 },
      { header: 'URL', value: (e) => e.url, maxWidth: 60 },
      { header: 'EVENTS', value: (e) => (e.eventTypes ? e.eventTypes.join(',') : '*'), maxWidth: 40 },
      { header: 'STATE', value: (e) => (e.enabled ? 'enabled' : `disabled: ${e.disabledReason ?? ''}`), maxWidth: 60 },
    ],
    list,
  );
}

function renderEndpoint(endpoint: Endpoint, health: EndpointHealth): string {
  const rate = health.successRate === null ? '-' : `${(health.successRate * 100).toFixed(1)} % of ${health.successes + health.failures}`;
  return [
    `Endpoint ${endpoint.id} (${endpoint.tenant})`,
    `  url:           ${endpoint.url}`,
    `  events:        ${endpoint.eventTypes ? endpoint.eventTypes.join(', ') : 'every type'}`,
    `  state:         ${endpoint.enabled ? 'enabled' : `disabled: ${endpoint.disabledReason ?? ''}`}`,
    ...(endpoint.description ? [`  description:   ${endpoint.description}`] : []),
    `  success rate:  ${rate}`,
    `  last success:  ${formatTime(health.lastSuccessAt)}`,
    `  last failure:  ${formatTime(health.lastFailureAt)}${health.failingSince ? ` (failing since ${formatTime(health.failingSince)})` : ''}`,
    `  breaker:       ${health.breakerState}${health.breakerRetryAt ? ` (next probe ${formatTime(health.breakerRetryAt)})` : ''}`,
    `  backlog:       ${health.backlog}`,
  ].join('\n');
}

