// A served dashboard over a harness store, with the data its tests look at: a webhook
// event carrying a secret-looking header and markup in its body, the job it fanned out
// to parked dead by a distinctive error, and a pending job nothing will run. Also the
// login a browser does (form, CSRF pair, session cookie) for tests that act as one.

import { validateConfig } from '../../src/config/validate-config.js';
import { startMailroomServer } from '../../src/server/mailroom-server.js';
import type { MailroomServer } from '../../src/server/mailroom-server.js';
import type { Mailroom } from '../../src/mailroom.js';
import { openTestMailroom } from '../harness/mailroom.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { waitFor } from '../harness/wait.js';
import { send } from '../ingress/ingress-kit.js';
import type { RawResponse } from '../ingress/ingress-kit.js';

export const TOKEN = 'test-dashboard-token-0123456789';
/** The dead job's error, searched for by its middle. */
export const DEAD_ERROR = 'SMTP 554: mailbox unavailable for <b>ops@example.com</b>';
/** A header value that must never reach a page. */
export const SECRET_HEADER_VALUE = 'sk_live_never_shown_42';
/** Markup in the event body that must show as text. */
export const BODY_MARKUP = '<img src=x onerror=alert(1)>';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

/** `shop` fans out to send_email; `crm` is stored with no task (the events list has two sources). */
function configWith(redactPaths: readonly string[] | undefined) {
  return validateConfig({
    sources: {
      shop: { provider: 'none', options: { idPath: '$.id', typePath: '$.type' }, tasks: [{ task: 'send_email' }] },
      crm: { provider: 'none', options: { idPath: '$.id', typePath: '$.kind' }, tasks: [] },
    },
    ...(redactPaths === undefined ? {} : { dashboard: { redactPaths: [...redactPaths] } }),
  });
}

export interface ServeDashboardOptions {
  /** The config's `dashboard.redactPaths`. */
  readonly redactPaths?: readonly string[];
}

export interface ServedDashboard {
  readonly mr: Mailroom;
  readonly server: MailroomServer;
  readonly url: string;
  readonly deadJobId: string;
  readonly pendingJobId: string;
  readonly eventId: string;
  /** Lets send_email succeed from now on (the "fix" before a replay). */
  fix(): void;
}

/** Serve a dashboard for `body`, and stop its server whatever happens. */
export async function withDashboard(harness: StoreHarness, body: (d: ServedDashboard) => Promise<void>, options: ServeDashboardOptions = {}): Promise<void> {
  const d = await serveDashboard(harness, options);
  try {
    await body(d);
  } finally {
    await d.server.stop({ timeoutMs: 1_000 });
  }
}

export async function serveDashboard(harness: StoreHarness, options: ServeDashboardOptions = {}): Promise<ServedDashboard> {
  const config = configWith(options.redactPaths);
  const { mr } = await openTestMailroom(harness);
  let fixed = false;
  mr.task('send_email', {
    maxAttempts: 1,
    async run() {
      if (!fixed) throw new Error(DEAD_ERROR);
      return { messageId: 'msg-1' };
    },
  });
  const server = await startMailroomServer({ mr, config, port: 0, host: '127.0.0.1', dashboard: { token: TOKEN }, worker: { pollMs: 50 } });
  const posted = await send(server.url, '/hooks/shop', {
    headers: { 'content-type': 'application/json', 'x-internal-token': SECRET_HEADER_VALUE, 'x-shop-topic': 'orders/paid' },
    body: JSON.stringify({ id: 'evt_1', type: 'order.paid', note: BODY_MARKUP }),
  });
  if (posted.status !== 202) throw new Error(`the webhook was not accepted: ${posted.status} ${posted.text}`);
  const eventId = String(posted.json.id);
  const [dead] = await waitFor(async () => {
    const jobs = await mr.listJobs({ status: 'dead' });
    return jobs.length === 1 && jobs;
  }, { timeoutMs: 10_000, description: 'the send_email job to die' });
  const pending = await mr.enqueue('never_run' as never, { note: 'nobody runs this' } as never);
  return { mr, server, url: server.url, deadJobId: dead!.id, pendingJobId: pending.id, eventId, fix: () => void (fixed = true) };
}

/** Every page and action, with the ids of the served data filled in. */
export function everyDashboardRoute(d: ServedDashboard): Array<{ method: 'GET' | 'POST'; path: string; body?: string }> {
  return [
    { method: 'GET', path: '/dashboard' },
    { method: 'GET', path: '/dashboard/live/overview' },
    { method: 'GET', path: '/dashboard/jobs?status=dead' },
    { method: 'GET', path: `/dashboard/jobs/${d.deadJobId}` },
    { method: 'GET', path: '/dashboard/events' },
    { method: 'GET', path: `/dashboard/events/${d.eventId}` },
    { method: 'GET', path: '/dashboard/replay?error=smtp' },
    { method: 'POST', path: '/dashboard/actions/replay', body: `id=${d.deadJobId}&reason=x&confirm=yes` },
    { method: 'POST', path: '/dashboard/actions/replay-filtered', body: 'reason=x&confirm=yes' },
    { method: 'POST', path: '/dashboard/actions/retry-now', body: `id=${d.pendingJobId}` },
    { method: 'POST', path: '/dashboard/actions/cancel', body: `id=${d.pendingJobId}` },
    { method: 'POST', path: '/dashboard/actions/pause-queue', body: 'queue=default&reason=x' },
    { method: 'POST', path: '/dashboard/actions/resume-queue', body: 'queue=default' },
    { method: 'GET', path: '/dashboard/endpoints' },
    { method: 'POST', path: '/dashboard/actions/endpoint-disable', body: 'id=1&reason=x' },
    { method: 'POST', path: '/dashboard/actions/endpoint-enable', body: 'id=1' },
    { method: 'POST', path: '/dashboard/actions/endpoint-recover', body: 'id=1&since=2026-01-01T00:00' },
    { method: 'POST', path: '/dashboard/actions/logout', body: '' },
  ];
}

/** Logs in through the form as a browser would; returns the session cookie. */
export async function logIn(url: string, token: string = TOKEN): Promise<{ cookie: string; response: RawResponse }> {
  const form = await send(url, '/dashboard/login', { method: 'GET', headers: { accept: 'text/html' } });
  const nonce = cookieFrom(form, 'mailroom_login');
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.text)![1]!;
  const response = await send(url, '/dashboard/login', {
    headers: { ...FORM, accept: 'text/html', cookie: `mailroom_login=${nonce}` },
    body: new URLSearchParams({ csrf, token, next: '/dashboard/jobs' }).toString(),
  });
  return { cookie: `mailroom_session=${cookieFrom(response, 'mailroom_session')}`, response };
}

export function cookieFrom(response: RawResponse, name: string): string {
  const cookies = ([] as string[]).concat(response.headers['set-cookie'] ?? []);
  const line = cookies.find((candidate) => candidate.startsWith(`${name}=`));
  if (!line) throw new Error(`no ${name} cookie in ${JSON.stringify(response.headers)}`);
  return line.slice(name.length + 1).split(';')[0]!;
}

/** The CSRF token the forms of the page at `path` carry for this session. */
export async function csrfOf(url: string, cookie: string, path: string): Promise<string> {
  const page = await send(url, path, { method: 'GET', headers: { accept: 'text/html', cookie } });
  return /name="csrf" value="([^"]+)"/.exec(page.text)![1]!;
}
