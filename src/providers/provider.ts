// The contract every webhook signature provider implements: verify raw bytes against a
// source's secrets, say which delivery and event type a request is, and sign samples.
// Providers are pure: no HTTP server, no store, no clock of their own (`now` is passed in).

/**
 * Why a request failed verification. Machine-readable (snake_case, like Zod issue codes);
 * `ingress/http-errors.ts` maps each to an HTTP status.
 * - `missing_header`: a header the scheme needs is absent or empty.
 * - `malformed_header`: a header is present but not in the scheme's syntax.
 * - `bad_signature`: no signature matches any of the source's secrets (wrong length included).
 * - `stale_timestamp` / `future_timestamp`: correctly signed, but the signed timestamp is
 *   further from `now` than the tolerance (a replay, or a clock that is off).
 * - `missing_secret`: the source has no usable secret, so nothing can verify.
 */
export type VerifyFailureReason =
  | 'missing_header'
  | 'malformed_header'
  | 'bad_signature'
  | 'stale_timestamp'
  | 'future_timestamp'
  | 'missing_secret';

/** Every `VerifyFailureReason`, for exhaustive tables and tests. */
export const VERIFY_FAILURE_REASONS: readonly VerifyFailureReason[] = [
  'missing_header',
  'malformed_header',
  'bad_signature',
  'stale_timestamp',
  'future_timestamp',
  'missing_secret',
];

/** A request that verified, with what the ingress needs to dedupe and route it. */
export interface VerifySuccess {
  readonly ok: true;
  /** The provider's id for this delivery (null when the scheme or config has none: no dedupe). */
  readonly deliveryId: string | null;
  /** The event type used to filter a source's fan-out (Stripe `type`, GitHub `X-GitHub-Event`, ...). */
  readonly eventType: string | null;
  /** The signed timestamp, for schemes that sign one. */
  readonly timestamp?: Date;
  /**
   * The body as `JSON.parse` of its UTF-8 text, when the provider parsed it to identify
   * the event (absent when it did not, or the body is not JSON), so the ingress need not
   * parse it again. Read it, never change it.
   */
  readonly parsedBody?: unknown;
}

/** A request that did not verify. `message` names headers and numbers, never secrets or signatures. */
export interface VerifyFailure {
  readonly ok: false;
  readonly reason: VerifyFailureReason;
  readonly message: string;
}

/** The outcome of `Provider#verify`: a union, never an exception. */
export type VerifyResult = VerifySuccess | VerifyFailure;

/** Request headers as node:http gives them: lower-cased names, `string[]` only for repeats. */
export type RequestHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** What a provider reads to identify a request (no secrets needed). */
export interface IdentifyInput<O> {
  readonly headers: RequestHeaders;
  /** The body exactly as received; never re-serialized. */
  readonly rawBody: Buffer;
  readonly options: O;
}

/** What a provider reads to judge a request by its headers alone, before its body arrives. */
export interface HeaderCheckInput<O> {
  readonly headers: RequestHeaders;
  readonly options: O;
  /** The time to judge timestamps against. */
  readonly now: Date;
}

/** What a provider reads to verify a request. */
export interface VerifyInput<O> extends IdentifyInput<O> {
  /** Every secret currently valid for the source; the request verifies if any one matches (rotation). */
  readonly secrets: readonly string[];
  /** The time to judge timestamps against; the ingress passes its clock's now. */
  readonly now: Date;
}

/** What `Provider#sign` needs to produce a correctly signed sample request. */
export interface SignInput<O> {
  readonly rawBody: Buffer;
  readonly secret: string;
  /** The timestamp to sign, for schemes that sign one. */
  readonly now: Date;
  /** The delivery id to send where the scheme carries it in a header; a random one otherwise. */
  readonly deliveryId?: string;
  /** The event type to send where the scheme carries it in a header. */
  readonly eventType?: string;
  readonly options: O;
}

/** The delivery id and event type of a request, as its provider defines them. */
export interface EventIdentity {
  readonly deliveryId: string | null;
  readonly eventType: string | null;
}

/**
 * A webhook signature scheme. Implementations live one per file in `src/providers/`
 * and are looked up by name in `index.ts`.
 */
export interface Provider<O = unknown> {
  /** The name a source's config uses (`provider: 'stripe'`). */
  readonly name: string;
  /** False only for `none`: every other provider refuses to verify without a secret. */
  readonly requiresSecret: boolean;
  /**
   * Every spelling of every header that carries this scheme's signature, lower-cased: the
   * ingress never stores them, `forward` never sends them on, logs redact them. `null`
   * asks for the names the scheme fixes by itself (the process-wide list); with options,
   * the names they add too (`hmac`'s configured header).
   */
  secretHeaders(options: O | null): readonly string[];
  /**
   * Every spelling of the headers the delivery id and event type are read from,
   * lower-cased. A repeat of one is ambiguous (node joins repeats into `push, ping`, which
   * would route to nothing and dedupe on a made-up id), so the ingress refuses it.
   */
  routingHeaders(options: O): readonly string[];
  /**
   * Check and normalize the source's provider options.
   * @param keyPrefix the config path of the options object, used to name a bad key.
   * @throws ConfigError naming the bad key.
   */
  parseOptions(raw: unknown, keyPrefix: string): O;
  /** Why a configured secret can never verify (for config errors), or null when it is usable. */
  checkSecret(secret: string): string | null;
  /** Verify the raw body and headers against any of the secrets. Never throws. */
  verify(input: VerifyInput<O>): VerifyResult;
  /**
   * The failure `verify` is bound to report whatever the body: a signature header missing
   * or malformed, a signed timestamp outside the window. Null when only the body can
   * tell. Lets the ingress refuse before reading (and holding) a body. Never throws, and
   * never refuses a request `verify` would accept at the same `now`.
   */
  verifyHeaders(input: HeaderCheckInput<O>): VerifyFailure | null;
  /** Find the delivery id and event type. Works on unverified input; call it after `verify`. */
  identify(input: IdentifyInput<O>): EventIdentity;
  /** True when `identify` can ever return a delivery id with these options (else: no dedupe). */
  hasDeliveryId(options: O): boolean;
  /**
   * Headers that make `rawBody` verify under `secret` (for `mailroom send-test` and tests).
   * Content-Type is the caller's to set. May throw for a secret `checkSecret` rejects.
   */
  sign(input: SignInput<O>): Record<string, string>;
  /**
   * The reply to a handshake the provider sends before real events (Slack's
   * `url_verification`), or null when the body is not one. Verify first: Slack signs it too.
   */
  challengeResponse(rawBody: Buffer): string | null;
}

/** Build a `VerifyFailure`. */
export function verifyFailure(reason: VerifyFailureReason, message: string): VerifyFailure {
  return { ok: false, reason, message };
}

/** True when a header parser gave a failure rather than the parsed parts. */
export function isVerifyFailure(value: object): value is VerifyFailure {
  return (value as { ok?: unknown }).ok === false;
}
