// The single registry of Mailroom's error codes and classes. Callers match on `code`,
// never on message text; every code is listed in docs/errors.md (a test enforces it).

export const ERROR_CODES = {
  MR_ERR_CONFIG_INVALID: 'A configuration value is missing or has the wrong shape.',
  MR_ERR_STORE_URL_INVALID: 'The store URL is not one Mailroom understands.',
  MR_ERR_UNSAFE_FILESYSTEM: 'The SQLite database is on a network filesystem, where its locks and WAL are not safe.',
  MR_ERR_STORE_UNAVAILABLE: 'The store could not be reached or stayed locked past the deadline.',
  MR_ERR_SCHEMA_TOO_NEW: 'The database schema is newer than this version of Mailroom.',
  MR_ERR_MIGRATION_FAILED: 'A migration failed and was rolled back.',
  MR_ERR_UNIQUE_VIOLATION: 'A write hit a unique constraint the store did not expect to.',
  MR_ERR_VALUE_UNSTORABLE: 'The database cannot store a value as given (a NUL in text, an index entry too large).',
  MR_ERR_STORE_FAILED: 'The database refused a statement for a reason Mailroom does not classify.',
  MR_ERR_TRANSACTION_ABORTED: 'A statement in the transaction failed earlier, so the whole transaction was rolled back.',
  MR_ERR_KEY_CONFLICT: 'An idempotency key was reused with a different payload.',
  MR_ERR_JOB_NOT_FOUND: 'No job has that id.',
  MR_ERR_JOB_STATE: 'The job is not in a state that allows the operation.',
  MR_ERR_LIMIT_KEY_UNKNOWN: 'The task has per-key limits, but this process did not register it, so it cannot compute a job\'s limit key.',
  MR_ERR_INVALID_ARGUMENT: 'An argument to the API was invalid.',
  MR_ERR_TRANSACTION_ASYNC: 'A synchronous transaction callback returned a promise.',
  MR_ERR_UNSUPPORTED: 'The store does not support this operation.',
  MR_ERR_CLOSED: 'Mailroom, or the store under it, was closed.',
  MR_ERR_LEASE_LOST: 'The lease on the job was lost to another worker or expired.',
  MR_ERR_TIMEOUT: 'The handler ran past its timeout.',
  MR_ERR_PERMANENT: 'The handler declared the failure permanent.',
  MR_ERR_RETRY_AFTER: 'The handler asked to be retried after a delay.',
  MR_ERR_SNOOZE: 'The handler asked to run again later without charging the attempt.',
  MR_ERR_SNOOZE_LIMIT: 'The job was snoozed more times than its task allows (maxSnoozes).',
  MR_ERR_RESULT_UNSTORABLE: 'The handler returned a value that is not JSON or is larger than the cap for results.',
  MR_ERR_UNKNOWN_SOURCE: 'No webhook source has that name.',
  MR_ERR_SIGNATURE_INVALID: 'The webhook signature is missing, malformed, wrong or outside its time tolerance.',
  MR_ERR_PAYLOAD_TOO_LARGE: 'The request body is larger than the limit.',
  MR_ERR_BODY_MALFORMED: 'The request body does not parse as its content type says.',
  MR_ERR_INGRESS_BUSY: 'The request bodies being read already fill the memory budget for them.',
  MR_ERR_HEADER_AMBIGUOUS: 'A header that picks the delivery id or event type was sent more than once.',
  MR_ERR_EVENT_IDENTITY_INVALID: 'The delivery id or event type is too long or holds characters no store keeps.',
  MR_ERR_METHOD_NOT_ALLOWED: 'The route does not accept that HTTP method.',
  MR_ERR_REQUEST_TIMEOUT: 'The client did not send the request headers or body in time.',
  MR_ERR_HEADERS_TOO_LARGE: 'The request headers are larger than the server accepts.',
  MR_ERR_REQUEST_MALFORMED: 'The request is not valid HTTP.',
  MR_ERR_NOT_FOUND: 'No route matches the request.',
  MR_ERR_UNAUTHORIZED: 'Credentials are missing or wrong.',
  MR_ERR_ENDPOINT_NOT_FOUND: 'No outgoing-webhook endpoint has that id.',
  MR_ERR_MESSAGE_NOT_FOUND: 'No outgoing message has that id.',
  MR_ERR_ENDPOINT_DISABLED: 'The endpoint is disabled, and the operation needs it enabled.',
  MR_ERR_ROTATION_IN_PROGRESS: 'The endpoint\'s previous secret still signs from an earlier rotation; rotating again now would drop it.',
  MR_ERR_URL_BLOCKED: 'The endpoint URL resolves to an address outgoing deliveries may not reach (SSRF guard).',
  MR_ERR_LOGIN_THROTTLED: 'Too many wrong dashboard tokens came from this address; it may try again after Retry-After.',
  MR_ERR_CSRF_INVALID: 'A form was posted without the session\'s CSRF token, or from another site.',
} as const;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface MailroomErrorOptions {
  readonly cause?: unknown;
  readonly httpStatus?: number;
}

/** Base class of every error Mailroom throws on purpose. */
export class MailroomError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number | undefined;

  constructor(code: ErrorCode, message: string, options: MailroomErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.httpStatus = options.httpStatus;
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

export class ConfigError extends MailroomError {
  constructor(readonly key: string, message: string) {
    super('MR_ERR_CONFIG_INVALID', `${key}: ${message}`);
  }
}

export class StoreUrlError extends MailroomError {
  constructor(message: string) {
    super('MR_ERR_STORE_URL_INVALID', message);
  }
}

export class StoreUnavailableError extends MailroomError {
  /** How long a client should wait before retrying, for `Retry-After`. */
  readonly retryAfterMs: number;
  constructor(message: string, options: { cause?: unknown; retryAfterMs?: number } = {}) {
    super('MR_ERR_STORE_UNAVAILABLE', message, { cause: options.cause, httpStatus: 503 });
    this.retryAfterMs = options.retryAfterMs ?? 1_000;
  }
}

export class SchemaTooNewError extends MailroomError {
  /**
   * @param requiredCodeVersion The oldest code version the database's migrations allow
   *   (the newest of their `oldest-compatible-code`); defaults to `databaseVersion`.
   */
  constructor(
    readonly databaseVersion: number,
    readonly codeVersion: number,
    readonly requiredCodeVersion: number = databaseVersion,
  ) {
    super(
      'MR_ERR_SCHEMA_TOO_NEW',
      `The database schema is at version ${databaseVersion}, but this Mailroom only knows versions up to ${codeVersion}` +
        (requiredCodeVersion < databaseVersion ? ` and the schema needs one that knows at least ${requiredCodeVersion}. ` : '. ') +
        'Upgrade Mailroom to a release that knows the newer schema, or point it at another database.',
    );
  }
}

export class MigrationError extends MailroomError {
  constructor(readonly version: number, message: string, cause?: unknown) {
    super('MR_ERR_MIGRATION_FAILED', `migration ${version} failed: ${message}`, { cause });
  }
}

export class KeyConflictError extends MailroomError {
  constructor(readonly key: string, readonly existingJobId: string) {
    super(
      'MR_ERR_KEY_CONFLICT',
      `Idempotency key "${key}" already belongs to job ${existingJobId} with a different type or payload; ` +
        'use a new key, or enqueue the same type and payload to get the existing job back.',
      { httpStatus: 409 },
    );
  }
}

/** A message published again under its (tenant, key) with another type or payload. */
export class MessageKeyConflictError extends MailroomError {
  constructor(readonly key: string, readonly existingMessageId: string) {
    super(
      'MR_ERR_KEY_CONFLICT',
      `Message key "${key}" already belongs to message ${existingMessageId} with a different type or payload; ` +
        'use a new key, or publish the same payload to get the existing message back.',
      { httpStatus: 409 },
    );
  }
}

export class EndpointNotFoundError extends MailroomError {
  constructor(readonly endpointId: string) {
    super('MR_ERR_ENDPOINT_NOT_FOUND', `No endpoint with id ${endpointId}.`, { httpStatus: 404 });
  }
}

export class MessageNotFoundError extends MailroomError {
  constructor(readonly messageId: string) {
    super('MR_ERR_MESSAGE_NOT_FOUND', `No outgoing message with id ${messageId}.`, { httpStatus: 404 });
  }
}

export class EndpointDisabledError extends MailroomError {
  constructor(readonly endpointId: string, operation: string) {
    super('MR_ERR_ENDPOINT_DISABLED', `Endpoint ${endpointId} is disabled; enable it before you ${operation}.`, { httpStatus: 409 });
  }
}

/** The tenant portal's enable or recover of an endpoint the operator disabled: only the operator enables it again. */
export class EndpointHeldByOperatorError extends MailroomError {
  /** @param asNew a tenant adding a new endpoint with the URL of this one */
  constructor(
    readonly endpointId: string,
    asNew = false,
  ) {
    super(
      'MR_ERR_ENDPOINT_DISABLED',
      asNew
        ? `This URL is endpoint ${endpointId}'s, which your provider disabled; ask them to enable it again.`
        : `Endpoint ${endpointId} was disabled by your provider; ask them to enable it again.`,
      { httpStatus: 403 },
    );
  }
}

/**
 * A second rotation while the first one's old secret still signs: it would stop signing
 * with that secret at once, and a receiver still holding it would refuse every delivery.
 */
export class RotationInProgressError extends MailroomError {
  constructor(readonly endpointId: string, readonly overlapUntil: Date) {
    super(
      'MR_ERR_ROTATION_IN_PROGRESS',
      `Endpoint ${endpointId}'s secret before its last rotation still signs until ${overlapUntil.toISOString()}; ` +
        'rotating again now would stop it at once. Rotate after that time, or with an overlap of 0 to stop every earlier secret now.',
      { httpStatus: 409 },
    );
  }
}

/** The config key of an SSRF allowlist: the operator's, or the one of tenants' endpoints. */
export type AllowlistKey = 'endpoints.allowlist' | 'endpoints.tenantAllowlist';

/**
 * The SSRF guard refused an endpoint URL: its host is, or resolves to, an address of a
 * refused range. The message names the host and the range, never a credential.
 */
export class UrlBlockedError extends MailroomError {
  constructor(
    readonly host: string,
    readonly range: string,
    readonly address: string | null,
    /** The config key that would allow it. */
    allowlistKey: AllowlistKey = 'endpoints.allowlist',
  ) {
    super(
      'MR_ERR_URL_BLOCKED',
      `Endpoint host ${host}${address !== null && address !== host ? ` resolves to ${address}, which is` : ' is'} in a refused range (${range}); ` +
        'outgoing deliveries reach public addresses only. ' +
        (allowlistKey === 'endpoints.allowlist' ? 'If it is yours, allow it with endpoints.allowlist (in mailroom.config.mjs, or Mailroom.open({ endpoints })).' : "A tenant's endpoint may reach it only if endpoints.tenantAllowlist names it."),
      { httpStatus: 400 },
    );
  }

  /**
   * The refusal as a tenant reads it: the operator's wording advises what only the operator
   * can do (a config key) and names the internal address the host resolved to, which a
   * tenant must not learn (nor probe the operator's DNS with).
   */
  get tenantMessage(): string {
    return `Endpoint host ${this.host} is not a public address; deliveries go to public addresses only.`;
  }
}

export class JobNotFoundError extends MailroomError {
  constructor(readonly jobId: string) {
    super('MR_ERR_JOB_NOT_FOUND', `No job with id ${jobId}.`, { httpStatus: 404 });
  }
}

export class JobStateError extends MailroomError {
  /**
   * @param advice What to do instead, as a sentence; the CLI replaces the library's advice
   *   (`{ force: true }`) with its own (`--force`), so it is kept apart from the fact.
   */
  constructor(readonly jobId: string, readonly status: string, readonly operation: string, readonly advice?: string) {
    super('MR_ERR_JOB_STATE', `Job ${jobId} is ${status}; cannot ${operation} it.${advice ? ` ${advice}` : ''}`, { httpStatus: 409 });
  }
}

/**
 * An enqueue of a type whose worker declared per-key limits (the task directory), from a
 * process that has not registered the task: the key is a function of the payload that only
 * the definition has, and a job stored without it would share one key with every other.
 */
export class LimitKeyUnknownError extends MailroomError {
  constructor(readonly type: string) {
    super(
      'MR_ERR_LIMIT_KEY_UNKNOWN',
      `Task "${type}" has per-key limits (a worker recorded them), but this process has not registered it, so it cannot compute the job's limit key. ` +
        `Register the same definition here with mr.task("${type}", …) (or the CLI's --config), or enqueue from a process that has it.`,
      { httpStatus: 400 },
    );
  }
}

export class InvalidArgumentError extends MailroomError {
  constructor(message: string) {
    super('MR_ERR_INVALID_ARGUMENT', message, { httpStatus: 400 });
  }
}

export class UnsafeFilesystemError extends MailroomError {
  constructor(
    readonly directory: string,
    readonly filesystem: string,
  ) {
    super(
      'MR_ERR_UNSAFE_FILESYSTEM',
      `The SQLite database would be in ${directory}, on ${filesystem}: SQLite's locks and WAL are not safe on a network filesystem. Put the file on a local disk, or use PostgreSQL for several machines.`,
    );
  }
}

export class UnsupportedError extends MailroomError {
  constructor(message: string) {
    super('MR_ERR_UNSUPPORTED', message);
  }
}

export class ClosedError extends MailroomError {
  constructor() {
    super('MR_ERR_CLOSED', 'Mailroom has been closed.');
  }
}

export class LeaseLostError extends MailroomError {
  constructor(readonly jobId: string) {
    super('MR_ERR_LEASE_LOST', `The lease on job ${jobId} was lost; another worker may run it.`);
  }
}

export class TimeoutError extends MailroomError {
  constructor(readonly timeoutMs: number) {
    super('MR_ERR_TIMEOUT', `Handler timed out after ${timeoutMs} ms.`);
  }
}

/** A webhook arrived for a source the config does not name (ingress: 404). */
export class UnknownSourceError extends MailroomError {
  constructor(readonly source: string) {
    super('MR_ERR_UNKNOWN_SOURCE', `No webhook source named "${source}" is configured.`, { httpStatus: 404 });
  }
}

/** A request body went past the limit; reading stopped there (ingress: 413). */
export class PayloadTooLargeError extends MailroomError {
  constructor(readonly limitBytes: number) {
    super('MR_ERR_PAYLOAD_TOO_LARGE', `The request body is larger than the limit of ${limitBytes} bytes.`, { httpStatus: 413 });
  }
}

/**
 * Reading this body would take the bodies held in memory past the server's budget
 * (`server.bodyBufferLimitBytes`); nothing was read or stored (ingress: 503 + Retry-After).
 */
export class IngressBusyError extends MailroomError {
  /** How long a sender should wait before retrying, for `Retry-After`. */
  readonly retryAfterMs: number;
  constructor(readonly budgetBytes: number, retryAfterMs: number) {
    super(
      'MR_ERR_INGRESS_BUSY',
      `The server is reading as many request bodies as its memory budget of ${budgetBytes} bytes allows; nothing was stored. Retry later.`,
      { httpStatus: 503 },
    );
    this.retryAfterMs = retryAfterMs;
  }
}

/** The content type says JSON and the body does not parse (ingress: 400). */
export class BodyMalformedError extends MailroomError {
  constructor(message: string) {
    super('MR_ERR_BODY_MALFORMED', message, { httpStatus: 400 });
  }
}

/**
 * An inbound event's delivery id or event type is past the limits every store can hold
 * (ingress: 400). The value is not repeated in the message: it may be megabytes of anything.
 */
export class EventIdentityInvalidError extends MailroomError {
  constructor(readonly field: 'deliveryId' | 'type', readonly problem: string) {
    super('MR_ERR_EVENT_IDENTITY_INVALID', `The event's ${field === 'deliveryId' ? 'delivery id' : 'type'} ${problem}.`, { httpStatus: 400 });
  }
}

/** A header the delivery id or event type is read from came more than once (ingress: 400). */
export class AmbiguousHeaderError extends MailroomError {
  constructor(readonly header: string) {
    super('MR_ERR_HEADER_AMBIGUOUS', `The ${header} header was sent more than once; it must name one delivery or event type.`, { httpStatus: 400 });
  }
}

/** The route exists but not for this method (ingress: 405 with Allow). */
export class MethodNotAllowedError extends MailroomError {
  constructor(readonly method: string, readonly allowed: readonly string[]) {
    super('MR_ERR_METHOD_NOT_ALLOWED', `${method} is not allowed here; use ${allowed.join(', ')}.`, { httpStatus: 405 });
  }
}

/** No route serves the path, or the thing a route names (an event, a delivery) does not exist (HTTP 404). */
export class RouteNotFoundError extends MailroomError {
  constructor(
    readonly path: string,
    message = 'No route matches this path.',
  ) {
    super('MR_ERR_NOT_FOUND', message, { httpStatus: 404 });
  }
}

/** A dashboard request without a valid session or bearer token, or a portal request without a valid link or session (HTTP 401). */
export class UnauthorizedError extends MailroomError {
  constructor(message = 'Log in at /dashboard/login, or send Authorization: Bearer <dashboard token>.') {
    super('MR_ERR_UNAUTHORIZED', message, { httpStatus: 401 });
  }
}

/**
 * Too many wrong dashboard tokens from one address within the throttle's window: its next
 * tries are refused unchecked until the window ends (HTTP 429 + Retry-After).
 */
export class LoginThrottledError extends MailroomError {
  /** How long until this address may try a token again, for `Retry-After`. */
  readonly retryAfterMs: number;
  constructor(retryAfterMs: number) {
    super('MR_ERR_LOGIN_THROTTLED', 'Too many wrong dashboard tokens from this address; try again later.', { httpStatus: 429 });
    this.retryAfterMs = retryAfterMs;
  }
}

/** A dashboard or portal POST whose CSRF token is missing or wrong, or that came from another site (HTTP 403). */
export class CsrfError extends MailroomError {
  constructor(message = 'The form\'s CSRF token is missing or wrong; reload the page and try again.') {
    super('MR_ERR_CSRF_INVALID', message, { httpStatus: 403 });
  }
}

/**
 * Throw from a handler to park the job as `dead` at once, without further retries.
 * Recognised by its `code`, so a copy from another install of the package works too.
 * @example throw new Permanent('no such order');
 */
export class Permanent extends MailroomError {
  constructor(message = 'permanent failure', options: { cause?: unknown } = {}) {
    super('MR_ERR_PERMANENT', message, options);
  }
}

/**
 * Throw from a handler to retry no sooner than `delayMs` from now. The attempt is
 * charged (the handler ran), so `maxAttempts` still bounds a job that always defers.
 * With `atLeastBackoff`, the delay is only a floor: the retry waits for the task's own
 * backoff when that is longer (a receiver's `Retry-After: 1` must not use up a schedule
 * meant to outlast a day in seconds).
 * @example throw new RetryAfter(30_000, 'rate limited');
 */
export class RetryAfter extends MailroomError {
  readonly atLeastBackoff: boolean;
  constructor(readonly delayMs: number, message = `retry after ${delayMs} ms`, options: { cause?: unknown; atLeastBackoff?: boolean } = {}) {
    super('MR_ERR_RETRY_AFTER', message, { cause: options.cause });
    if (!Number.isFinite(delayMs) || delayMs < 0) throw new InvalidArgumentError('RetryAfter needs a delay in ms >= 0');
    this.atLeastBackoff = options.atLeastBackoff === true;
  }
}

/**
 * Throw from a handler for "not yet" rather than "failed": the job goes back to pending
 * for `delayMs` and the attempt is not charged (its history row says `snoozed`). The
 * task's `maxSnoozes` (default 100) bounds a job that is never ready: past it, a snooze
 * counts as a failure.
 * @example throw new Snooze(60_000, 'the report is still being generated');
 */
export class Snooze extends MailroomError {
  constructor(readonly delayMs: number, message = `snoozed for ${delayMs} ms`) {
    super('MR_ERR_SNOOZE', message);
    if (!Number.isFinite(delayMs) || delayMs < 0) throw new InvalidArgumentError('Snooze needs a delay in ms >= 0');
  }
}

/** A handler's return value or details that the store cannot keep (not JSON, or over the cap). */
export class ResultUnstorableError extends MailroomError {
  constructor(message: string, options: { cause?: unknown } = {}) {
    super('MR_ERR_RESULT_UNSTORABLE', message, options);
  }
}

/** The requested delay for a `Snooze` from any copy of the package, else null. */
export function snoozeDelayMs(error: unknown): number | null {
  if (!hasCode(error, 'MR_ERR_SNOOZE')) return null;
  const delay = (error as { delayMs?: unknown }).delayMs;
  return typeof delay === 'number' && Number.isFinite(delay) && delay >= 0 ? delay : null;
}

/** True for a `Permanent` from any copy of the package. */
export function isPermanent(error: unknown): boolean {
  return hasCode(error, 'MR_ERR_PERMANENT');
}

/** The requested delay for a `RetryAfter` from any copy of the package, else null. */
export function retryAfterDelayMs(error: unknown): number | null {
  if (!hasCode(error, 'MR_ERR_RETRY_AFTER')) return null;
  const delay = (error as { delayMs?: unknown }).delayMs;
  return typeof delay === 'number' && Number.isFinite(delay) && delay >= 0 ? delay : null;
}

/** True for a `RetryAfter` whose delay is a floor under the task's backoff. */
export function isRetryAfterFloor(error: unknown): boolean {
  return hasCode(error, 'MR_ERR_RETRY_AFTER') && (error as { atLeastBackoff?: unknown }).atLeastBackoff === true;
}

export function hasCode(error: unknown, code: ErrorCode): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === code;
}

/** 40 frames and 4,000 characters: enough to find the throwing line, small enough to keep per attempt. */
const MAX_STACK_LINES = 40;
const MAX_STACK_CHARS = 4_000;

/**
 * The stack of anything thrown, cut to a bound, for the attempt's history; null when it
 * has none. Read by property, not `instanceof`, so an error from another realm keeps it.
 */
export function boundedStack(error: unknown): string | null {
  const stack = (error as { stack?: unknown } | null)?.stack;
  if (typeof stack !== 'string' || stack.trim() === '') return null;
  const lines = stack.split('\n');
  let text = lines.slice(0, MAX_STACK_LINES).join('\n');
  if (lines.length > MAX_STACK_LINES) text += `\n    … ${lines.length - MAX_STACK_LINES} more lines`;
  return text.length > MAX_STACK_CHARS ? `${text.slice(0, MAX_STACK_CHARS)}…` : text;
}

/** A one-line description of anything thrown, for `lastError` and logs. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const text = error.message ? `${error.name}: ${error.message}` : error.name;
    return text.length > 4_000 ? `${text.slice(0, 4_000)}…` : text;
  }
  try {
    return `non-error thrown: ${JSON.stringify(error)}`.slice(0, 4_000);
  } catch {
    return 'non-error thrown';
  }
}
