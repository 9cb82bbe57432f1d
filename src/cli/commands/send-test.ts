// `mailroom send-test --source NAME`: post a correctly signed sample event for any
// configured provider to a running server, and print its answer. The quickest proof that
// a source's secret, provider and fan-out are wired the way you think.

import { randomUUID } from 'node:crypto';
import { CliUsageError, parseCommandArgs } from '../args.js';
import type { CommonOptions } from '../args.js';
import type { CliCommand } from '../command.js';
import { loadConfig } from '../../config/load-config.js';
import { configureProvider } from '../../providers/index.js';
import type { ProviderName } from '../../providers/index.js';
import { writeJson } from '../output.js';
import { terminalText } from '../../core/display-text.js';
import type { MailroomConfig, SourceConfig } from '../../config/define-config.js';
import { listenAddress } from '../../server/server-address.js';

export interface SendTestCliOptions {
  readonly common: CommonOptions;
  readonly source: string;
  readonly url?: string;
  readonly eventType?: string;
}

/** Where `mailroom serve` listens with this config (a wildcard host is reached on loopback). */
function configuredServer(config: MailroomConfig): string {
  const { host, port } = listenAddress(config);
  if (port === 0) throw new CliUsageError("The config's server.port is 0 (serve picks a port at start): pass --url with the one it printed.");
  const reachable = host === '0.0.0.0' || host === '::' || host === '' ? '127.0.0.1' : host;
  return `http://${reachable.includes(':') && !reachable.startsWith('[') ? `[${reachable}]` : reachable}:${port}`;
}

/** Long enough for a server under load; a test event that takes longer says something is wrong. */
const REQUEST_TIMEOUT_MS = 10_000;

const sendTest: CliCommand<SendTestCliOptions> = {
  name: 'send-test',
  summary: 'Post a correctly signed sample event to a running server',
  usage: `Usage: mailroom send-test --source NAME [--url URL] [--type EVENT_TYPE] [--config PATH]

Builds a sample event for the source's provider, signs it with the source's first secret
(from the config file, mailroom.config.js/.mjs or --config PATH), posts it to
URL/hooks/NAME and prints the answer: 202 with the stored event's id, or 200 when the
same delivery was already stored. Exits 1 unless the answer is 2xx.

Options:
  --source NAME              the configured source to post to (required)
  --url URL                  the server (default: PORT, then the config's server.host and
                             server.port, as serve binds them; else http://127.0.0.1:8080)
  --type EVENT_TYPE          the event type to send (default: when every task of the
                             source filters by type, the first one they take; else
                             one the provider knows)
  --config PATH
  --json                     print the answer as JSON`,

  parse(argv, io) {
    const { values, common } = parseCommandArgs('send-test', argv, {
      source: { type: 'string' },
      url: { type: 'string' },
      type: { type: 'string' },
    });
    if (values.source === undefined || values.source.trim() === '') {
      throw new CliUsageError('--source NAME is required. Run `mailroom send-test --help`.');
    }
    // Without --url, PORT says where serve listens (it takes PORT before the config too);
    // else run() reads the config's server address.
    const url = values.url ?? (io.env.PORT?.trim() ? `http://127.0.0.1:${io.env.PORT.trim()}` : undefined);
    if (url !== undefined) {
      try {
        new URL(url);
      } catch {
        throw new CliUsageError(`--url ${url} is not a URL (e.g. http://127.0.0.1:8080).`);
      }
    }
    return { common, source: values.source, url, eventType: values.type };
  },

  async run(options, io) {
    const config = await loadConfig({ path: options.common.config, cwd: io.cwd });
    if (config === null) throw new Error('No config file: create mailroom.config.js (or pass --config PATH) with the source to test.');
    const sourceConfig = config.sources?.[options.source];
    if (!sourceConfig) {
      const known = Object.keys(config.sources ?? {});
      throw new Error(`No source "${options.source}" in the config${known.length > 0 ? `; configured: ${known.join(', ')}` : ''}.`);
    }
    const provider = configureProvider(sourceConfig, `sources.${options.source}`);
    const sample = sampleEvent(provider.name, options.eventType ?? typeEveryTaskTakes(sourceConfig));
    const rawBody = Buffer.from(JSON.stringify(sample.body), 'utf8');
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'mailroom-send-test',
      ...provider.sign({ rawBody, now: new Date(), deliveryId: sample.deliveryId, eventType: sample.eventType }),
    };
    const target = new URL(`hooks/${encodeURIComponent(options.source)}`, withTrailingSlash(options.url ?? configuredServer(config))).href;
    let response: Response;
    try {
      response = await fetch(target, { method: 'POST', headers, body: rawBody, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).message;
      throw new Error(`Could not reach ${target} (${cause}). Is \`mailroom serve\` running there?`);
    }
    const text = await response.text();
    let answer: unknown = text;
    try {
      answer = JSON.parse(text);
    } catch {
      // Not JSON: print it as text.
    }
    if (options.common.json) {
      writeJson(io.stdout, { url: target, status: response.status, deliveryId: sample.deliveryId, eventType: sample.eventType, answer });
    } else {
      io.stdout.write(`POST ${target}  (${provider.name}, event type ${sample.eventType}, delivery ${sample.deliveryId})\n`);
      io.stdout.write(`${response.status} ${terminalText(typeof answer === 'string' ? answer : JSON.stringify(answer))}\n`);
      const stored = answer as { id?: string; duplicate?: boolean };
      if (response.status === 202 && stored?.id) {
        io.stdout.write(`Stored as event ${stored.id}; the server's log shows the jobs it fanned out to as they run.\n`);
      }
    }
    return response.ok ? 0 : 1;
  },
};

/**
 * With no --type, when every task of the source filters by event type: the first type
 * they take (a GitHub source of `events: ['push']` gets a push, not a ping that would fan
 * out to nothing). Otherwise undefined: the provider's own sample type.
 */
function typeEveryTaskTakes(source: SourceConfig): string | undefined {
  const rules = source.tasks ?? [];
  const filters = rules.map((rule) => (typeof rule === 'string' ? undefined : rule.events?.[0]));
  return filters.length > 0 && filters.every((type) => type !== undefined) ? filters[0] : undefined;
}

interface SampleEvent {
  readonly body: unknown;
  readonly deliveryId: string;
  readonly eventType: string;
}

/**
 * A small, realistic event for `provider`: ids and types where the provider reads them
 * (Stripe's body `id`/`type`, Slack's `event_id`, `$.id`/`$.type` for hmac and none).
 */
export function sampleEvent(provider: ProviderName, eventType?: string): SampleEvent {
  const suffix = randomUUID().replace(/-/g, '').slice(0, 16);
  const now = Math.floor(Date.now() / 1000);
  switch (provider) {
    case 'stripe': {
      const type = eventType ?? 'payment_intent.succeeded';
      const id = `evt_test_${suffix}`;
      return { deliveryId: id, eventType: type, body: { id, object: 'event', type, created: now, livemode: false, data: { object: { id: `pi_test_${suffix}`, object: 'payment_intent', customer: 'cus_test_mailroom', amount: 2000, currency: 'usd' } } } };
    }
    case 'github': {
      const type = eventType ?? 'ping';
      return { deliveryId: randomUUID(), eventType: type, body: { zen: 'Mailroom says hello.', hook_id: 1, repository: { full_name: 'example/mailroom-test' }, sender: { login: 'mailroom' } } };
    }
    case 'slack': {
      const type = eventType ?? 'app_mention';
      const id = `Ev${suffix.toUpperCase()}`;
      return { deliveryId: id, eventType: type, body: { type: 'event_callback', event_id: id, event_time: now, team_id: 'T0MAILROOM', event: { type, text: 'hello from mailroom send-test', user: 'U0MAILROOM' } } };
    }
    case 'shopify': {
      const type = eventType ?? 'orders/create';
      return { deliveryId: randomUUID(), eventType: type, body: { id: Number(BigInt(`0x${suffix.slice(0, 12)}`)), email: 'test@example.com', total_price: '20.00', currency: 'USD' } };
    }
    default: {
      // standard, polar, hmac, none: the id travels in a header (standard, polar) or at $.id.
      const type = eventType ?? 'mailroom.test';
      const id = `msg_${suffix}`;
      return { deliveryId: id, eventType: type, body: { id, type, timestamp: new Date().toISOString(), data: { message: 'Hello from mailroom send-test' } } };
    }
  }
}

function withTrailingSlash(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

export default sendTest;
