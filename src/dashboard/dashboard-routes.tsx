// The operator dashboard's routes, mounted by server/mailroom-server.ts beside the
// webhooks. Every route but the login page and the static assets (files of the package,
// no data) checks credentials before it reads anything; every POST is checked for the
// session's CSRF token and a same-site origin before it changes anything. Reads go through
// the Mailroom facade and the store's own list methods: a filter reaches SQL only as a
// bound parameter of a column on the store's allow-list.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { CsrfError, InvalidArgumentError, JobNotFoundError, RouteNotFoundError, UnauthorizedError } from '../core/errors.js';
import { parseEventBody } from '../core/event-body.js';
import { JOB_STATUSES } from '../core/types.js';
import type { Job, JobStatus } from '../core/types.js';
import { sendJson } from '../ingress/http-errors.js';
import type { Route } from '../ingress/route-table.js';
import type { Logger } from '../log.js';
import type { Mailroom } from '../mailroom.js';
import { assetRoute } from './asset-route.js';
import { clientKeyOf, LoginThrottle } from './login-throttle.js';
import { cookiesOf, DashboardAuth, LOGIN_COOKIE, LOGIN_TTL_MS, SESSION_COOKIE, SESSION_TTL_MS } from './dashboard-auth.js';
import type { DashboardCredential } from './dashboard-auth.js';
import { assertSameOrigin, cookie, readForm, redirect, sendError, sendView, wantsHtml } from './dashboard-http.js';
import { idCursor, optionalField, optionalId, parseTime, requiredField } from './form-fields.js';
import { endpointRowsPage } from './endpoint-rows.js';
import { cursorEnqueuedBefore } from './enqueued-before.js';
import { jobsPage } from './job-search.js';
import { redactedBodyText, redactJson } from './redact.js';
import { BASE, href } from './views/components.js';
import { EndpointsPage } from './views/endpoints.js';
import { EventPage, EventsPage } from './views/event.js';
import type { EventsQuery } from './views/event.js';
import { JobPage } from './views/job.js';
import { JobsPage } from './views/jobs.js';
import type { JobsQuery } from './views/jobs.js';
import { ErrorPage, LoginPage } from './views/layout.js';
import { OverviewPage, OverviewPanel } from './views/overview.js';
import type { OverviewData } from './views/overview.js';
import { REPLAY_UNSUPPORTED_FILTERS, ReplayConfirmPage } from './views/replay-confirm.js';
import type { ReplayFilterQuery } from './views/replay-confirm.js';

export interface DashboardOptions {
  readonly mr: Mailroom;
  /** The login and bearer token. */
  readonly token: string;
  /** @default mr.log */
  readonly log?: Logger;
  /** Dot paths hidden in payloads, results and details (config `dashboard.redactPaths`). */
  readonly redactPaths?: readonly string[];
  /** The clock sessions are judged by (tests). @default Date.now */
  readonly now?: () => number;
}

/** Rows on a list page. */
const PAGE_SIZE = 50;
/** Dead jobs shown on the replay confirmation page. */
const REPLAY_SAMPLE = 100;
/** The longest reason, filter or cursor a form or link may carry. */
const MAX_FIELD_CHARS = 500;
/** Who a replay from the dashboard is recorded as (`replays[].by`). */
const REPLAYED_BY = 'dashboard'; // who an action is recorded as (replays, pause and resume logs)

const READ = ['GET', 'HEAD'] as const;
const WRITE = ['POST'] as const;

/** What an action just did, by the code its redirect carries: the page never echoes free text. */
const NOTICES: Readonly<Record<string, string>> = {
  replayed: 'Replayed: the job is pending again with a fresh attempt budget.',
  'ran-now': 'Made due now: a worker takes it on its next claim.',
  cancelled: 'Cancelled.',
  'endpoint-disabled': 'Disabled: nothing is sent to it, and what is published meanwhile is recorded as skipped.',
  'endpoint-enabled': 'Enabled: new messages go to it again; recover what was skipped meanwhile.',
};

/** Endpoints with their health on one page: each row reads its health, so a page stays small. */
const ENDPOINTS_PAGE_SIZE = 50;
/** The recover form proposes what failed or was skipped in the last day. */
const RECOVER_DEFAULT_MS = 24 * 3_600_000;

interface Request {
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
  readonly query: URLSearchParams;
  readonly params: Readonly<Record<string, string>>;
  readonly credential: DashboardCredential;
  /** The session's CSRF token for the page's forms; null for a bearer request. */
  readonly csrfToken: string | null;
  /** performance.now() when the request arrived, for Server-Timing. */
  readonly startedAt: number;
}

/**
 * The dashboard's routes: pages, a refreshable overview panel, actions, login and assets.
 * @example
 * const routes = dashboardRoutes({ mr, token: process.env.MAILROOM_DASHBOARD_TOKEN! });
 * await startMailroomServer({ mr, config, routes });
 */
export function dashboardRoutes(options: DashboardOptions): Route[] {
  const { mr } = options;
  const log = options.log ?? mr.log;
  const auth = new DashboardAuth(options.token);
  const throttle = new LoginThrottle();
  const clientOf = (req: IncomingMessage) => clientKeyOf(req.socket.remoteAddress ?? 'unknown');
  const now = options.now ?? Date.now;
  const redactPaths = options.redactPaths ?? [];

  /** A route whose handler runs only for an authenticated request (and, for POST, a genuine form). */
  const guarded = (path: string, methods: readonly string[], handler: (request: Request) => Promise<void>): Route => ({
    path,
    methods,
    async handle(req, res, params) {
      const startedAt = performance.now();
      let credential: DashboardCredential | null = null;
      try {
        // A bearer token is a guess like the login form's: throttled per address alike.
        const client = req.headers.authorization !== undefined ? clientOf(req) : null;
        if (client !== null) throttle.check(client, now());
        credential = auth.credentialOf(req, now());
        if (credential === null) {
          if (client !== null) {
            throttle.fail(client, now());
            log.warn({ remote: req.socket.remoteAddress }, 'dashboard request with a wrong bearer token');
          }
          throw new UnauthorizedError();
        }
        const csrfToken = credential.kind === 'session' ? credential.csrfToken : null;
        const query = new URL(req.url ?? '/', 'http://dashboard.invalid').searchParams;
        await handler({ req, res, query, params, credential, csrfToken, startedAt });
      } catch (error) {
        answerError(req, res, error, credential);
      }
    },
  });

  /** Errors as a page for a browser, as the server's JSON error for a script; a browser without a session goes to login. */
  function answerError(req: IncomingMessage, res: ServerResponse, error: unknown, credential: DashboardCredential | null): void {
    if (error instanceof UnauthorizedError && wantsHtml(req) && req.method !== 'POST' && !res.headersSent) {
      redirect(res, href('/login', { next: pathOf(req) + searchOf(req) }));
      return;
    }
    const csrfToken = credential?.kind === 'session' ? credential.csrfToken : null;
    sendError(req, res, error, log, (answer) => <ErrorPage status={answer.status} code={answer.code} message={answer.message} csrfToken={csrfToken} />);
  }

  /** A POST's form, after proving it came from a dashboard page of this session (or a script with the token). */
  async function genuineForm(request: Request): Promise<URLSearchParams> {
    const { req, credential } = request;
    // Read first: the answer, even a refusal, goes out only once the body is in (finish-response.ts).
    const form = await readForm(req);
    if (credential.kind === 'bearer') return form;
    assertSameOrigin(req);
    if (!auth.isCsrfToken(credential.sessionId, form.get('csrf') ?? undefined)) throw new CsrfError();
    return form;
  }

  /** After an action: a browser goes to `location`, a script gets `body` as JSON. */
  function acted(request: Request, location: string, body: unknown): void {
    if (wantsHtml(request.req)) redirect(request.res, location);
    else sendJson(request.res, 200, body);
  }

  async function overviewData(): Promise<OverviewData> {
    const [stats, finished] = await Promise.all([mr.stats(), mr.store.jobFinishedPerMinute({})]);
    return { stats, finished };
  }

  const loginRoute: Route = {
    path: `${BASE}/login`,
    methods: ['GET', 'HEAD', 'POST'],
    async handle(req, res) {
      try {
        const nowMs = now();
        if (req.method !== 'POST') {
          showLogin(req, res, safeNext(new URL(req.url ?? '/', 'http://dashboard.invalid').searchParams.get('next')), false, 200);
          return;
        }
        const form = await readForm(req);
        const next = safeNext(form.get('next'));
        if (!auth.isLoginCsrfToken(cookiesOf(req)[LOGIN_COOKIE], form.get('csrf') ?? undefined, nowMs)) throw new CsrfError();
        const client = clientOf(req);
        throttle.check(client, nowMs);
        if (!auth.isToken(form.get('token') ?? '')) {
          throttle.fail(client, nowMs);
          log.warn({ remote: req.socket.remoteAddress }, 'dashboard login with a wrong token');
          showLogin(req, res, next, true, 401);
          return;
        }
        redirect(res, next, [
          cookie(req, SESSION_COOKIE, auth.newSession(nowMs), { path: BASE, maxAgeSeconds: SESSION_TTL_MS / 1_000 }),
          cookie(req, LOGIN_COOKIE, '', { path: `${BASE}/login`, maxAgeSeconds: 0 }),
        ]);
      } catch (error) {
        answerError(req, res, error, null);
      }
    },
  };

  function showLogin(req: IncomingMessage, res: ServerResponse, next: string, failed: boolean, status: number): void {
    const login = auth.newLogin(now());
    sendView(res, status, <LoginPage csrfToken={login.csrfToken} next={next} failed={failed} />, {
      headers: { 'set-cookie': cookie(req, LOGIN_COOKIE, login.nonce, { path: `${BASE}/login`, maxAgeSeconds: LOGIN_TTL_MS / 1_000 }) },
    });
  }

  return [
    loginRoute,
    assetRoute(BASE),

    // `/dashboard/` as typed (or as a proxy rewrites it) is the overview, as the portal's `/portal/` is.
    { path: `${BASE}/`, methods: ['GET', 'HEAD'], handle: (_req, res) => redirect(res, BASE) },

    guarded(BASE, READ, async (request) => {
      const data = await overviewData();
      sendView(request.res, 200, <OverviewPage {...data} csrfToken={request.csrfToken} />, { startedAt: request.startedAt });
    }),

    guarded(`${BASE}/live/overview`, READ, async (request) => {
      sendView(request.res, 200, <OverviewPanel {...await overviewData()} csrfToken={request.csrfToken} />, { fragment: true, startedAt: request.startedAt });
    }),

    guarded(`${BASE}/jobs`, READ, async (request) => {
      const query = jobsQueryOf(request.query);
      let after = query.after;
      if (query.before !== undefined) {
        const cursor = await cursorEnqueuedBefore(mr.store, parseTime(query.before, 'before'));
        if (after === undefined || BigInt(cursor) < BigInt(after)) after = cursor;
      }
      const filter = { status: query.status as JobStatus | undefined, type: query.type, queue: query.queue, source: query.source, errorContains: query.error, batchId: query.batch };
      const { jobs, nextAfter, searchStopped } = await jobsPage(mr, filter, after, PAGE_SIZE);
      sendView(request.res, 200, <JobsPage query={query} jobs={jobs} nextAfter={nextAfter} searchStopped={searchStopped} csrfToken={request.csrfToken} />, {
        startedAt: request.startedAt,
      });
    }),

    guarded(`${BASE}/jobs/:id`, READ, async (request) => {
      const id = request.params.id!;
      const job = await mr.getJob(id);
      if (!job) throw new JobNotFoundError(id.slice(0, 40));
      const event = job.eventId === null ? null : await mr.getEvent(job.eventId);
      const batchId = job.batchId ?? job.completesBatchId;
      const batch = batchId === null ? null : await mr.getBatch(batchId);
      // A webhook's job stores no payload of its own: its handler gets the event's parsed body.
      const payload = job.payload === null && event !== null ? parseEventBody(event.rawBody, event.headers['content-type']) : job.payload;
      const shown = {
        payload: redactJson(payload, redactPaths),
        result: redactJson(job.result, redactPaths),
        details: job.attemptsLog.map((attempt) => redactJson(attempt.details, redactPaths)),
      };
      const notice = NOTICES[request.query.get('done') ?? ''];
      sendView(request.res, 200, <JobPage job={job} shown={shown} event={event} batch={batch} csrfToken={request.csrfToken} notice={notice} />, {
        startedAt: request.startedAt,
      });
    }),

    guarded(`${BASE}/events`, READ, async (request) => {
      const query: EventsQuery = { source: field(request.query, 'source'), type: field(request.query, 'type'), after: idCursor(request.query) };
      const rows = await mr.listEvents({ ...query, descending: true, limit: PAGE_SIZE + 1 });
      const events = rows.slice(0, PAGE_SIZE);
      const nextAfter = rows.length > PAGE_SIZE ? events[events.length - 1]!.id : null;
      sendView(request.res, 200, <EventsPage query={query} events={events} nextAfter={nextAfter} csrfToken={request.csrfToken} />, {
        startedAt: request.startedAt,
      });
    }),

    guarded(`${BASE}/events/:id`, READ, async (request) => {
      const id = request.params.id!;
      const event = await mr.getEvent(id);
      if (!event) throw new RouteNotFoundError(`${BASE}/events/${id.slice(0, 40)}`, `No event with id ${id.slice(0, 40)}.`);
      const jobs: Job[] = await mr.listJobs({ eventId: event.id, limit: PAGE_SIZE });
      sendView(request.res, 200, <EventPage event={event} bodyText={redactedBodyText(event.rawBody, redactPaths)} jobs={jobs} csrfToken={request.csrfToken} />, { startedAt: request.startedAt });
    }),

    guarded(`${BASE}/endpoints`, READ, async (request) => {
      const tenant = field(request.query, 'tenant');
      const { rows, nextAfter } = await endpointRowsPage(mr, { tenant, after: idCursor(request.query) }, ENDPOINTS_PAGE_SIZE);
      const done = request.query.get('done') ?? '';
      const recovered = /^\d{1,9}$/.exec(request.query.get('count') ?? '');
      const notice = done === 'recovered' && recovered ? `Recovered ${recovered[0]} deliveries: each is being sent again.` : NOTICES[done];
      const recoverSince = new Date(now() - RECOVER_DEFAULT_MS).toISOString().slice(0, 16);
      sendView(
        request.res,
        200,
        <EndpointsPage tenant={tenant} rows={rows} nextAfter={nextAfter} notice={notice} recoverSince={recoverSince} csrfToken={request.csrfToken} />,
        { startedAt: request.startedAt },
      );
    }),

    guarded(`${BASE}/replay`, READ, async (request) => {
      const filter = replayFilterOf(request.query);
      const sample =
        filter.unsupported.length > 0
          ? { jobs: [], nextAfter: null }
          : await jobsPage(mr, { status: 'dead', type: filter.type, source: filter.source, errorContains: filter.error }, undefined, REPLAY_SAMPLE);
      // A filtered replay leaves cancelled jobs alone, so the count it promises leaves them out too.
      const replayable = sample.jobs.filter((job) => job.deadReason !== 'cancelled');
      sendView(
        request.res,
        200,
        <ReplayConfirmPage filter={filter} sample={replayable} more={sample.nextAfter !== null} csrfToken={request.csrfToken} />,
        { startedAt: request.startedAt },
      );
    }),

    guarded(`${BASE}/actions/:action`, WRITE, async (request) => {
      const form = await genuineForm(request);
      switch (request.params.action) {
        case 'replay': {
          const id = required(form, 'id');
          confirmed(form);
          const result = await mr.replay({ id }, { reason: required(form, 'reason'), by: REPLAYED_BY, force: form.get('force') === '1' });
          acted(request, href(`/jobs/${id}`, { done: 'replayed' }), result);
          return;
        }
        case 'replay-filtered': {
          confirmed(form);
          const filter = replayFilterOf(form);
          if (filter.unsupported.length > 0) throw new InvalidArgumentError(`a replay cannot be narrowed by ${filter.unsupported.join(', ')}`);
          const result = await mr.replay(
            { status: 'dead', type: filter.type, source: filter.source, errorContains: filter.error },
            { reason: required(form, 'reason'), by: REPLAYED_BY },
          );
          log.info({ count: result.count, filter, by: REPLAYED_BY }, 'dashboard replayed a filtered set');
          acted(request, href('/jobs', { status: 'pending', type: filter.type, source: filter.source }), result);
          return;
        }
        case 'retry-now': {
          const id = required(form, 'id');
          const result = await mr.retryNow(id);
          acted(request, href(`/jobs/${id}`, { done: 'ran-now' }), result);
          return;
        }
        case 'cancel': {
          const id = required(form, 'id');
          const job = await mr.cancel(id, { reason: field(form, 'reason') });
          acted(request, href(`/jobs/${id}`, { done: 'cancelled' }), { id: job.id, status: job.status });
          return;
        }
        case 'pause-queue': {
          const queue = required(form, 'queue');
          const changed = await mr.pauseQueue(queue, { reason: field(form, 'reason') });
          log.info({ queue, reason: field(form, 'reason'), by: REPLAYED_BY }, 'dashboard paused a queue');
          acted(request, href('', { done: 'paused' }), { queue, paused: true, changed });
          return;
        }
        case 'resume-queue': {
          const queue = required(form, 'queue');
          const changed = await mr.resumeQueue(queue);
          log.info({ queue, by: REPLAYED_BY }, 'dashboard resumed a queue');
          acted(request, href('', { done: 'resumed' }), { queue, paused: false, changed });
          return;
        }
        case 'endpoint-disable': {
          const endpoint = await mr.endpoints.disable(required(form, 'id'), required(form, 'reason'));
          acted(request, href('/endpoints', { tenant: field(form, 'tenant'), done: 'endpoint-disabled' }), endpoint);
          return;
        }
        case 'endpoint-enable': {
          const endpoint = await mr.endpoints.enable(required(form, 'id'));
          acted(request, href('/endpoints', { tenant: field(form, 'tenant'), done: 'endpoint-enabled' }), endpoint);
          return;
        }
        case 'endpoint-recover': {
          const result = await mr.endpoints.recover(required(form, 'id'), { since: parseTime(required(form, 'since'), 'since') });
          acted(request, href('/endpoints', { tenant: field(form, 'tenant'), done: 'recovered', count: String(result.count) }), result);
          return;
        }
        case 'logout':
          // Sessions are signed, not stored: the cookie is dropped here; changing the token ends them all.
          redirect(request.res, href('/login'), [cookie(request.req, SESSION_COOKIE, '', { path: BASE, maxAgeSeconds: 0 })]);
          return;
        default:
          throw new RouteNotFoundError(`${BASE}/actions/${String(request.params.action).slice(0, 40)}`);
      }
    }),
  ];
}

/** The jobs list's query, each value checked against its allow-list or bound. */
function jobsQueryOf(query: URLSearchParams): JobsQuery {
  const status = field(query, 'status');
  if (status !== undefined && !JOB_STATUSES.includes(status as JobStatus)) {
    throw new InvalidArgumentError(`status must be one of ${JOB_STATUSES.join(', ')}`);
  }
  return {
    status,
    type: field(query, 'type'),
    queue: field(query, 'queue'),
    source: field(query, 'source'),
    error: field(query, 'error'),
    batch: optionalId(query, 'batch'),
    before: field(query, 'before'),
    after: idCursor(query),
  };
}


function replayFilterOf(values: URLSearchParams): ReplayFilterQuery {
  const unsupported = REPLAY_UNSUPPORTED_FILTERS.filter((name) => field(values, name) !== undefined);
  return { type: field(values, 'type'), source: field(values, 'source'), error: field(values, 'error'), unsupported };
}

/** A non-empty value of at most 500 characters, or undefined. */
function field(values: URLSearchParams, name: string): string | undefined {
  return optionalField(values, name, MAX_FIELD_CHARS);
}

function required(values: URLSearchParams, name: string): string {
  return requiredField(values, name, MAX_FIELD_CHARS);
}

/** Replays ask twice: the form's checkbox (a script sends confirm=yes). */
function confirmed(form: URLSearchParams): void {
  if (form.get('confirm') !== 'yes') throw new InvalidArgumentError('confirm=yes is required to replay');
}

/** Where to go after login: a dashboard path only, never another site (`//evil`, `/\evil`). */
function safeNext(next: string | null): string {
  if (next === null || !next.startsWith(BASE) || /^\/\/|\\/.test(next) || next.startsWith(`${BASE}/login`)) return BASE;
  if (next.length > 2_000) return BASE;
  return next;
}

function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return (query === -1 ? url : url.slice(0, query)).slice(0, 500);
}

function searchOf(req: IncomingMessage): string {
  const url = req.url ?? '';
  const query = url.indexOf('?');
  return query === -1 ? '' : url.slice(query, query + 1_500);
}


