// Turns the config's `sources` into what the hooks route needs per request: a provider
// bound to its secrets, the body limit, and a compiled fan-out (event filter, group path),
// so nothing is parsed or looked up by name while a webhook waits.

import { ConfigError } from '../core/errors.js';
import { configureProvider } from '../providers/index.js';
import type { ConfiguredProvider } from '../providers/index.js';
import { parseJsonPath } from '../providers/json-path.js';
import type { JsonPathStep } from '../providers/json-path.js';
import type { MailroomConfig, SourceConfig } from '../config/define-config.js';
import type { Logger } from '../log.js';

/** 1 MiB: larger than any provider's documented payload cap (Stripe, GitHub: 25 MB is the outlier; set it per source). */
export const DEFAULT_BODY_LIMIT_BYTES = 1_048_576;

/** One fan-out entry, ready to match. */
export interface FanOutRule {
  readonly task: string;
  /** Event types that fan out to the task; null means every event. */
  readonly events: ReadonlySet<string> | null;
  /** Steps of the group JSON path, or null for no group. */
  readonly groupPath: readonly JsonPathStep[] | null;
  readonly priority: number;
}

/** A configured source as the hooks route uses it. */
export interface IngressSource {
  readonly name: string;
  readonly provider: ConfiguredProvider;
  readonly bodyLimitBytes: number;
  readonly fanOut: readonly FanOutRule[];
}

/**
 * Compile every source in `config`. Warns (once, at start) about sources that verify
 * nothing (`none`) or cannot dedupe.
 * @param bodyBufferLimitBytes the memory budget for bodies: a source whose limit is larger
 *   could never have a body read, so it is a config error.
 * @throws ConfigError naming the bad key (the config is normally validated before this).
 */
export function compileSources(config: MailroomConfig, log?: Logger, bodyBufferLimitBytes = Infinity): Map<string, IngressSource> {
  const sources = new Map<string, IngressSource>();
  const defaultLimit = config.server?.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  for (const [name, source] of Object.entries(config.sources ?? {})) {
    const compiled = compileSource(name, source, defaultLimit);
    if (compiled.bodyLimitBytes > bodyBufferLimitBytes) {
      const key = source.bodyLimitBytes !== undefined ? `sources.${name}.bodyLimitBytes` : 'server.bodyLimitBytes';
      throw new ConfigError(key, `is ${compiled.bodyLimitBytes}, more than server.bodyBufferLimitBytes (${bodyBufferLimitBytes}): no such body could ever be read`);
    }
    if (compiled.provider.name === 'none') {
      log?.warn({ source: name }, "source uses provider 'none': requests are NOT verified; anyone who can reach the server can post events");
    }
    if (!compiled.provider.hasDeliveryId) {
      log?.warn({ source: name }, 'source has no delivery id (set options.idHeader or options.idPath): redeliveries will not be deduped');
    }
    sources.set(name, compiled);
  }
  return sources;
}

function compileSource(name: string, source: SourceConfig, defaultLimit: number): IngressSource {
  const provider = configureProvider(source, `sources.${name}`);
  const fanOut = (source.tasks ?? []).map((entry): FanOutRule => {
    if (typeof entry === 'string') return { task: entry, events: null, groupPath: null, priority: 0 };
    return {
      task: entry.task,
      events: entry.events ? new Set(entry.events) : null,
      groupPath: entry.group ? parseJsonPath(entry.group) : null,
      priority: entry.priority ?? 0,
    };
  });
  return { name, provider, bodyLimitBytes: source.bodyLimitBytes ?? defaultLimit, fanOut };
}
