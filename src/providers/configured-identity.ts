// Delivery id and event type for the schemes that define neither (`hmac`, `none`): the
// operator names a header or a JSON path for each. Without an id there is no dedupe.

import { readHeader } from './header-value.js';
import { parseJsonBody } from './json-body.js';
import { readJsonPathId } from './json-path.js';
import type { EventIdentity, IdentifyInput } from './provider.js';
import { readOptionalHeaderName, readOptionalJsonPath } from './provider-options.js';

/** Where to find the delivery id and event type; a header wins over a path when both are set. */
export interface IdentityOptions {
  /** Header holding the delivery id (dedupe key), e.g. `x-request-id`. */
  readonly idHeader?: string;
  /** JSON path to the delivery id in the body, e.g. `$.id`. */
  readonly idPath?: string;
  /** Header holding the event type. */
  readonly typeHeader?: string;
  /** JSON path to the event type in the body, e.g. `$.type`. */
  readonly typePath?: string;
}

/** The option keys `readIdentityOptions` reads. */
export const IDENTITY_OPTION_KEYS = ['idHeader', 'idPath', 'typeHeader', 'typePath'] as const;

/** Read and check the identity options from an options object. */
export function readIdentityOptions(record: Record<string, unknown>, keyPrefix: string): IdentityOptions {
  const options: { -readonly [K in keyof IdentityOptions]: IdentityOptions[K] } = {};
  const idHeader = readOptionalHeaderName(record, 'idHeader', keyPrefix);
  const idPath = readOptionalJsonPath(record, 'idPath', keyPrefix);
  const typeHeader = readOptionalHeaderName(record, 'typeHeader', keyPrefix);
  const typePath = readOptionalJsonPath(record, 'typePath', keyPrefix);
  if (idHeader !== undefined) options.idHeader = idHeader;
  if (idPath !== undefined) options.idPath = idPath;
  if (typeHeader !== undefined) options.typeHeader = typeHeader;
  if (typePath !== undefined) options.typePath = typePath;
  return options;
}

/** The delivery id and event type as the options say to find them. */
export function identifyConfigured(input: IdentifyInput<IdentityOptions>): EventIdentity {
  const { options } = input;
  let body: unknown;
  let isBodyParsed = false;
  const fromPath = (path: string | undefined): string | null => {
    if (path === undefined) return null;
    if (!isBodyParsed) {
      body = parseJsonBody(input.rawBody);
      isBodyParsed = true;
    }
    return readJsonPathId(body, path);
  };
  const fromHeader = (name: string | undefined): string | null =>
    name === undefined ? null : (readHeader(input.headers, name) ?? null);
  return {
    deliveryId: fromHeader(options.idHeader) ?? fromPath(options.idPath),
    eventType: fromHeader(options.typeHeader) ?? fromPath(options.typePath),
  };
}

/** True when the options name somewhere to find a delivery id. */
export function hasConfiguredDeliveryId(options: IdentityOptions): boolean {
  return options.idHeader !== undefined || options.idPath !== undefined;
}

/** The headers the options read the delivery id and type from. */
export function identityHeaderNames(options: IdentityOptions): string[] {
  return [options.idHeader, options.typeHeader].filter((name): name is string => name !== undefined);
}

/** Headers carrying the sample's id and type where the options put them in headers. */
export function identityHeaders(options: IdentityOptions, deliveryId: string | undefined, eventType: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  if (options.idHeader !== undefined && deliveryId !== undefined) headers[options.idHeader] = deliveryId;
  if (options.typeHeader !== undefined && eventType !== undefined) headers[options.typeHeader] = eventType;
  return headers;
}
