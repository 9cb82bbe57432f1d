// POST /hooks/:source — read the raw body (bounded), verify it with the source's provider,
// and store the event with the jobs it fans out to in ONE store call, deduped on
// (source, delivery id). Only after that commits does the sender get 202 (or 200 for a
// redelivery). Anything that stops short of the commit answers with an error and has
// written nothing.

import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { BodyMalformedError, StoreUnavailableError, UnknownSourceError } from '../core/errors.js';
import type { Logger } from '../log.js';
import type { IngestJob, Mailroom } from '../mailroom.js';
import { idText, readJsonPath } from '../providers/json-path.js';
import type { RequestHeaders } from '../providers/provider.js';
import { traceIngress } from '../tracing.js';
import { checkHeaders } from './header-checks.js';
import { httpErrorFromError, httpErrorFromVerifyFailure, sendHttpError, sendJson } from './http-errors.js';
import type { HttpError } from './http-errors.js';
import type { BodyBudget, BodyReservation } from './body-budget.js';
import { readBody, RequestAbortedError } from './read-body.js';
import type { Route } from './route-table.js';
import type { FanOutRule, IngressSource } from './sources.js';
import { jsonOfFormPayload } from '../core/event-body.js';
import { isSecretName } from '../core/secret-names.js';

export interface HooksRouteDeps {
  readonly mr: Mailroom;
  readonly sources: ReadonlyMap<string, IngressSource>;
  readonly log: Logger;
  /** Called once per answered request (metrics). */
  readonly onAnswer: (source: string, status: number) => void;
  /** The time signatures are judged at. @default () => new Date() */
  readonly now?: () => Date;
  /** The memory budget every request's body is read against. */
  readonly bodyBudget: BodyBudget;
}

/** What a stored (or redelivered) event answers. */
export interface HookAcceptance {
  readonly id: string;
  readonly duplicate: boolean;
}

/** The route: `POST /hooks/<source>`, traced as the server span of the webhook's trace. */
export function hooksRoute(deps: HooksRouteDeps): Route {
  return {
    path: '/hooks/:source',
    methods: ['POST'],
    handle: (req, res, params) => traceIngress(req, res, params.source!, () => handleHook(req, res, params.source!, deps)),
  };
}

/** Handle one request to `/hooks/<sourceName>`; never throws. */
export async function handleHook(req: IncomingMessage, res: ServerResponse, sourceName: string, deps: HooksRouteDeps): Promise<void> {
  const source = deps.sources.get(sourceName);
  // An unknown name is counted under one label so a scanner cannot grow the metric's cardinality.
  const metricSource = source ? source.name : '(unknown)';
  const refuse = (error: HttpError, detail: Readonly<Record<string, unknown>> = {}) => {
    sendHttpError(res, error);
    deps.onAnswer(metricSource, error.status);
    const level = error.status >= 500 ? 'warn' : 'info';
    deps.log[level]({ source: sourceName.slice(0, 100), status: error.status, code: error.code, ...detail }, 'webhook refused');
  };

  if (!source) {
    refuse(httpErrorFromError(new UnknownSourceError(sourceName.slice(0, 100))));
    return;
  }

  const headerRefusal = checkHeaders(req, source, deps.now ? deps.now() : new Date());
  if (headerRefusal !== null) {
    refuse(headerRefusal.error, headerRefusal.detail);
    return;
  }

  // The body counts against the shared budget until this request is done with it.
  const reservation = deps.bodyBudget.reserve();
  try {
    await acceptBody({ req, res, source, deps, refuse }, reservation);
  } finally {
    reservation.release();
  }
}

/** One request to a known source whose headers passed. */
interface HookRequest {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly source: IngressSource;
  readonly deps: HooksRouteDeps;
  refuse(error: HttpError, detail?: Readonly<Record<string, unknown>>): void;
}

/** Read, verify and store the body; answers every outcome. */
async function acceptBody({ req, res, source, deps, refuse }: HookRequest, reservation: BodyReservation): Promise<void> {
  let rawBody: Buffer;
  try {
    rawBody = await readBody(req, { limitBytes: source.bodyLimitBytes, budget: deps.bodyBudget, reservation });
  } catch (error) {
    if (error instanceof RequestAbortedError) {
      deps.log.debug({ source: source.name }, 'webhook abandoned by the client mid-body');
      return;
    }
    refuse(httpErrorFromError(error), { limitBytes: source.bodyLimitBytes, heldBytes: deps.bodyBudget.heldBytes });
    return;
  }

  const verified = source.provider.verify({ headers: req.headers, rawBody, now: deps.now ? deps.now() : new Date() });
  if (!verified.ok) {
    refuse(httpErrorFromVerifyFailure(verified), { reason: verified.reason });
    return;
  }

  const challenge = source.provider.challengeResponse(rawBody);
  if (challenge !== null) {
    sendJson(res, 200, { challenge });
    deps.onAnswer(source.name, 200);
    deps.log.info({ source: source.name }, 'answered the provider url_verification challenge');
    return;
  }

  let body: unknown;
  try {
    body = parseBody(req.headers, rawBody, source.fanOut, verified.parsedBody);
  } catch (error) {
    refuse(httpErrorFromError(error));
    return;
  }

  // Not `verified` past the await below: it holds the parsed body, which would then live
  // through the commit and be copied by every young-generation GC on the way.
  const { deliveryId, eventType } = verified;
  try {
    const jobs = fanOut(source.fanOut, eventType, body);
    // ingest() builds the jobs by enqueue's rules, commits the event and its jobs together, then wakes this process's workers.
    const result = await deps.mr.ingest({
      event: {
        source: source.name,
        deliveryId,
        type: eventType,
        headers: storableHeaders(req.headers, source.provider.secretHeaders),
        rawBody,
      },
      jobs,
    });
    const status = result.isDuplicate ? 200 : 202;
    const answer: HookAcceptance = { id: result.event.id, duplicate: result.isDuplicate };
    sendJson(res, status, answer);
    deps.onAnswer(source.name, status);
    // One info line per accepted event, like an access log: success must not be silent.
    deps.log.info(
      { source: source.name, status, eventId: result.event.id, deliveryId, type: eventType, jobs: result.jobs.length, duplicate: result.isDuplicate },
      result.isDuplicate ? 'webhook redelivered: already stored' : 'webhook stored',
    );
  } catch (error) {
    const answer = httpErrorFromError(error);
    // A typed refusal (a delivery id past the limits) is the sender's; a store that is
    // down has its own log lines. Anything else is a bug worth a stack.
    const isUnexpected = answer.status >= 500 && !(error instanceof StoreUnavailableError);
    if (isUnexpected) deps.log.error({ source: source.name, err: error }, 'webhook could not be stored');
    refuse(answer);
  }
}

/**
 * The parsed body when something needs it (a JSON content type, which must parse, or a
 * group path), else undefined. Non-JSON bodies (form-encoded, binary) are stored as they are;
 * for a group path, a form-encoded body's `payload` field is read as the JSON it holds.
 * `parsedBody` is the provider's parse of the same bytes, if it made one: used, not redone.
 * @throws BodyMalformedError when the content type says JSON and the body is not UTF-8 or does not parse.
 */
function parseBody(headers: RequestHeaders, rawBody: Buffer, rules: readonly FanOutRule[], parsedBody: unknown): unknown {
  const contentType = headers['content-type'];
  const mime = (typeof contentType === 'string' ? contentType : '').split(';', 1)[0]!.trim().toLowerCase();
  const isJson = mime === 'application/json' || mime.endsWith('+json');
  if (isJson) {
    // JSON is UTF-8 (RFC 8259 §8.1). Decoding would turn a bad byte into U+FFFD and parse,
    // so the handler would see other text than the bytes stored and forwarded, and a
    // receiver that verifies the forward over decoded text gets another signature.
    if (!isUtf8(rawBody)) throw new BodyMalformedError('The body is not valid UTF-8, but its Content-Type says JSON.');
    if (parsedBody !== undefined) return parsedBody;
    try {
      return JSON.parse(rawBody.toString('utf8'));
    } catch {
      throw new BodyMalformedError('The body is not valid JSON, but its Content-Type says it is.');
    }
  }
  if (!rules.some((rule) => rule.groupPath !== null)) return undefined;
  if (parsedBody !== undefined) return parsedBody;
  // GitHub's form content type: the event's JSON in a `payload` field, as the handler gets it.
  if (mime === 'application/x-www-form-urlencoded') return jsonOfFormPayload(rawBody.toString('utf8'));
  try {
    return JSON.parse(rawBody.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** The jobs an event of `eventType` fans out to; ingest() gives each its task's queue and attempt budget. */
function fanOut(rules: readonly FanOutRule[], eventType: string | null, body: unknown): IngestJob[] {
  const jobs: IngestJob[] = [];
  for (const rule of rules) {
    if (rule.events !== null && (eventType === null || !rule.events.has(eventType))) continue;
    jobs.push({ type: rule.task, priority: rule.priority, group: rule.groupPath ? idText(readJsonPath(body, rule.groupPath)) : null });
  }
  return jobs;
}

/** Request headers as stored: one string per name, signatures and credentials (and names that look like one) dropped. */
function storableHeaders(headers: RequestHeaders, secretHeaders: ReadonlySet<string>): Record<string, string> {
  const stored: Record<string, string> = {};
  // Names only, then one lookup each: Object.entries made a pair array per header.
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (value === undefined || secretHeaders.has(name) || isSecretName(name)) continue;
    stored[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return stored;
}
