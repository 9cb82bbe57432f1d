// `mailroom endpoints add|list|get|update|disable|enable|rotate-secret|recover|remove`:
// outgoing-webhook endpoints of your tenants. `add` and `rotate-secret` print the signing
// secret once, for the customer; nothing else ever prints it. `get` shows the health.

import { CliUsageError, durationFlagText, parseCommandArgs, parseDurationMs, parseIsoDate, parseJobId, parseList } from '../args.js';
import type { CommonOptions } from '../args.js';
import { withCliMailroom } from '../cli-mailroom.js';
import type { CliCommand } from '../command.js';
import { formatTime, renderTable, writeJson, writeLines } from '../output.js';
import { EndpointNotFoundError } from '../../core/errors.js';
import type { Endpoint, EndpointHealth, EndpointRateLimit } from '../../core/outgoing-types.js';

const ACTIONS = ['add', 'list', 'get', 'update', 'disable', 'enable', 'rotate-secret', 'recover', 'remove'] as const;
type Action = (typeof ACTIONS)[number];

export interface EndpointsCliOptions {
  readonly common: CommonOptions;
  readonly action: Action;
  readonly id?: string;
  readonly tenant?: string;
  readonly url?: string;
  /** null: every type (`--events '*'`, which clears a filter on update). */
  readonly eventTypes?: string[] | null;
  readonly description?: string;
  /** null clears it (update --rate-limit none). */
  readonly rateLimit?: EndpointRateLimit | null;
  /** null clears it (update --metadata null). */
  readonly metadata?: Record<string, unknown> | null;
  readonly reason?: string;
  readonly overlapMs?: number;
  readonly since?: Date;
}

const endpoints: CliCommand<EndpointsCliOptions> = {
  name: 'endpoints',
  summary: 'Outgoing webhook endpoints: add, list, get (with health), disable, enable, rotate-secret, recover',
  usage: `Usage: mailroom endpoints add --tenant T --url URL [--events a,b] [--description D]
                                [--rate-limit N/DUR] [--metadata JSON] [--json]
       mailroom endpoints list [--tenant T] [--json]
       mailroom endpoints get ID [--json]
       mailroom endpoints update ID [--url URL] [--events a,b] [--description D]
                                [--rate-limit N/DUR | none] [--metadata JSON | null] [--json]
       mailroom endpoints disable ID [--reason R] | enable ID | remove ID
       mailroom endpoints rotate-secret ID [--overlap 24h] [--json]
       mailroom endpoints recover ID --since (2026-11-01T00:00:00Z | 24h) [--json]

Endpoints are your customers' receivers of outgoing webhooks (mr.publish). add prints the
signing secret (whsec_…) once: hand it to the customer, Mailroom never shows it again.
rotate-secret prints a new one; the old one keeps signing beside it for --overlap. A second
rotation is refused while the first one's old secret still signs, unless --overlap is 0,
which stops every earlier secret at once.
get shows the endpoint's health: success rate, last success and failure, breaker, backlog.
recover sends its failed and skipped deliveries since a time again (enable it first).

Options:
  --tenant T        the customer's id
  --url URL         http(s) URL; refused if it resolves to a private or local address
  --events a,b      event types it receives (default: every type; '*' sets every type again)
  --description D
  --rate-limit N/DUR  at most N deliveries started in any DUR, e.g. 100/1m (none: no limit)
  --metadata JSON   a JSON object kept with the endpoint (null: clear it)
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
        'rate-limit': { type: 'string' },
        metadata: { type: 'string' },
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
    if (!needsId && id !== undefined) throw new CliUsageError(`${action} takes no id.`);
    if (action === 'add' && (values.tenant === undefined || values.url === undefined)) {
      throw new CliUsageError('add needs --tenant T and --url URL.');
    }
    if (action === 'recover' && values.since === undefined) throw new CliUsageError('recover needs --since (an ISO time, or a duration such as 24h).');
    const settable = action === 'add' || action === 'update';
    for (const flag of ['rate-limit', 'metadata'] as const) {
      if (values[flag] !== undefined && !settable) throw new CliUsageError(`--${flag} goes with mailroom endpoints add or update.`);
    }
    return {
      common,
      action: action as Action,
      id: id === undefined ? undefined : parseJobId(id, 'ID', 'endpoint'),
      tenant: values.tenant,
      url: values.url,
      eventTypes: values.events === undefined ? undefined : parseEvents(values.events),
      description: values.description,
      rateLimit: values['rate-limit'] === undefined ? undefined : parseRateLimit(values['rate-limit'], action === 'update'),
      metadata: values.metadata === undefined ? undefined : parseMetadata(values.metadata, action === 'update'),
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
          const added = await mr.endpoints.add({
            tenant: options.tenant!,
            url: options.url!,
            eventTypes: options.eventTypes ?? undefined,
            description: options.description,
            rateLimit: options.rateLimit ?? undefined,
            metadata: options.metadata ?? undefined,
          });
          if (json) writeJson(io.stdout, { ...endpointToJson(added), secret: added.secret });
          else writeLines(io.stdout, `Added endpoint ${added.id} for ${added.tenant}: ${added.url}`, `Signing secret (shown once; give it to the customer): ${added.secret}`);
          return 0;
        }
        case 'list': {
          const list = await mr.endpoints.list({ tenant: options.tenant, limit: 10_000 });
          if (json) writeJson(io.stdout, list.map(endpointToJson));
          else if (list.length > 0) writeLines(io.stdout, renderEndpoints(list));
          else if (options.tenant !== undefined) writeLines(io.stdout, `Tenant ${options.tenant} has no endpoints; mailroom endpoints list shows every tenant's.`);
          else writeLines(io.stdout, 'No endpoints yet: mailroom endpoints add --tenant T --url URL.');
          return 0;
        }
        case 'get': {
          const endpoint = await mr.endpoints.get(id);
          if (!endpoint) throw new EndpointNotFoundError(id);
          const health = await mr.endpoints.health(id);
          if (json) writeJson(io.stdout, { ...endpointToJson(endpoint), health: healthToJson(health) });
          else writeLines(io.stdout, renderEndpoint(endpoint, health));
          return 0;
        }
        case 'update': {
          const changes = { url: options.url, eventTypes: options.eventTypes, description: options.description, rateLimit: options.rateLimit, metadata: options.metadata };
          if (Object.values(changes).every((change) => change === undefined)) {
            throw new CliUsageError('update needs something to change: --url, --events, --description, --rate-limit or --metadata.');
          }
          const updated = await mr.endpoints.update(id, changes);
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
          const { secret, previousSecretUntil } = await mr.endpoints.rotateSecret(id, { overlapMs: options.overlapMs });
          if (json) writeJson(io.stdout, { id, secret, previousSecretUntil: previousSecretUntil.toISOString() });
          else {
            writeLines(
              io.stdout,
              `New signing secret for endpoint ${id} (shown once): ${secret}`,
              options.overlapMs === 0 ? 'Every earlier secret stopped signing now.' : `The old one keeps signing beside it until ${previousSecretUntil.toISOString()}.`,
            );
          }
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

/** `--since`: an ISO time, or a duration back from now; a time still to come matches nothing, so it is refused. */
function parseSince(text: string): Date {
  const since = /^\d{4}-\d{2}-\d{2}/.test(text) ? parseIsoDate(text, '--since') : new Date(Date.now() - sinceDurationMs(text));
  if (since.getTime() > Date.now()) throw new CliUsageError(`--since ${text} is in the future; recover re-sends deliveries created since a past time.`);
  return since;
}

/** `--events a,b`, or `*` for every type (as `endpoints list` shows an endpoint without a filter). */
function parseEvents(text: string): string[] | null {
  if (text.trim() === '*') return null;
  return parseList(text, '--events', 'invoice.paid,invoice.failed');
}

/** A duration back from now, refused in words that name both forms `--since` takes. */
function sinceDurationMs(text: string): number {
  try {
    return parseDurationMs(text, '--since');
  } catch {
    throw new CliUsageError(`--since takes an ISO time such as 2026-11-01T00:00:00Z, or a duration back from now such as 24h or 7d, not "${text}".`);
  }
}

/** `--rate-limit 100/1m`: at most 100 deliveries started in any minute; `none` clears it on update. */
function parseRateLimit(text: string, clearable: boolean): EndpointRateLimit | null {
  if (clearable && text.trim() === 'none') return null;
  const match = /^\s*(\d+)\s*\/\s*(\S+)\s*$/.exec(text);
  const limit = Number(match?.[1]);
  if (!match || !Number.isSafeInteger(limit) || limit < 1) {
    throw new CliUsageError(`--rate-limit takes N/DURATION such as 100/1m (N deliveries started in any DURATION)${clearable ? ', or none' : ''}, not "${text}".`);
  }
  const intervalMs = parseDurationMs(match[2], '--rate-limit');
  if (intervalMs < 1) throw new CliUsageError(`--rate-limit needs a DURATION of at least 1ms, not "${text}".`);
  return { limit, intervalMs };
}

/** `--metadata '{"plan":"pro"}'`: a JSON object; `null` clears it on update. */
function parseMetadata(text: string, clearable: boolean): Record<string, unknown> | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (value === null && clearable) return null;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliUsageError(`--metadata takes a JSON object such as '{"plan":"pro"}'${clearable ? ', or null' : ''}, not ${JSON.stringify(text)}.`);
  }
  return value as Record<string, unknown>;
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
    disabledBy: endpoint.disabledBy,
    addedBy: endpoint.addedBy,
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
      { header: 'ADDED BY', value: (e) => e.addedBy },
    ],
    list,
  );
}

function renderEndpoint(endpoint: Endpoint, health: EndpointHealth): string {
  const rateWindow = endpoint.rateLimit ? durationFlagText(endpoint.rateLimit.intervalMs) : '';
  const rate = health.successRate === null ? '-' : `${(health.successRate * 100).toFixed(1)} % of ${health.successes + health.failures}`;
  return [
    `Endpoint ${endpoint.id} (${endpoint.tenant})`,
    `  url:           ${endpoint.url}`,
    `  events:        ${endpoint.eventTypes ? endpoint.eventTypes.join(', ') : 'every type'}`,
    `  state:         ${endpoint.enabled ? 'enabled' : `disabled by ${endpoint.disabledBy}: ${endpoint.disabledReason ?? ''}`}`,
    // Which SSRF allowlist its URL answers to: the operator's, or endpoints.tenantAllowlist.
    `  added by:      ${endpoint.addedBy === 'tenant' ? 'the tenant (portal)' : 'the operator'}`,
    ...(endpoint.description ? [`  description:   ${endpoint.description}`] : []),
    ...(endpoint.rateLimit ? [`  rate limit:    ${endpoint.rateLimit.limit}/${rateWindow} (deliveries started in any ${rateWindow})`] : []),
    ...(endpoint.metadata ? [`  metadata:      ${JSON.stringify(endpoint.metadata)}`] : []),
    `  success rate:  ${rate}`,
    `  last success:  ${formatTime(health.lastSuccessAt)}`,
    `  last failure:  ${formatTime(health.lastFailureAt)}${health.failingSince ? ` (failing since ${formatTime(health.failingSince)})` : ''}`,
    `  breaker:       ${health.breakerState}${breakerProbeText(health.breakerRetryAt)}`,
    `  backlog:       ${health.backlog}`,
  ].join('\n');
}

/**
 * When an open breaker's probe may go. The breaker stays open until a delivery takes that
 * probe, so with nothing waiting the time passes and stays: past, it says the next one tests it.
 */
function breakerProbeText(retryAt: Date | null): string {
  if (retryAt === null) return '';
  if (retryAt.getTime() <= Date.now()) return ` (probe due since ${formatTime(retryAt)}: the next delivery tests the endpoint)`;
  return ` (next probe ${formatTime(retryAt)})`;
}
