// The page frame: head, navigation and the one stylesheet and script, both served by the
// dashboard itself (no CDN: the page works with no network beyond this server).

import type { ComponentChildren } from 'preact';
import { ActionForm, BASE } from './components.js';

export type Section = 'overview' | 'jobs' | 'events' | 'endpoints' | 'login' | 'error';

export function Layout(props: {
  readonly title: string;
  readonly section: Section;
  /** The session's CSRF token (for the log-out form); null for bearer requests and the login page. */
  readonly csrfToken: string | null;
  readonly children: ComponentChildren;
}) {
  const nav: Array<[Exclude<Section, 'login' | 'error'>, string, string]> = [
    ['overview', 'Overview', BASE],
    ['jobs', 'Jobs', `${BASE}/jobs`],
    ['events', 'Events', `${BASE}/events`],
    ['endpoints', 'Endpoints', `${BASE}/endpoints`],
  ];
  return (
    <html lang="en">
      <PageHead title={props.title} base={BASE} />
      <body>
        <header>
          <strong class="brand">Mailroom</strong>
          {props.section === 'login' ? null : (
            <nav>
              {nav.map(([section, label, link]) => (
                <a href={link} class={section === props.section ? 'current' : undefined}>
                  {label}
                </a>
              ))}
            </nav>
          )}
          {props.csrfToken === null ? null : (
            <ActionForm action="logout" csrfToken={props.csrfToken} class="logout">
              <button type="submit">Log out</button>
            </ActionForm>
          )}
        </header>
        <main>{props.children}</main>
      </body>
    </html>
  );
}

/**
 * The head of every page: its title, and the stylesheet and script served under `base`.
 * `referrer` is the page's referrer policy: a meta tag overrides the Referrer-Policy header,
 * so a page whose own address is a credential (the portal's switch page) says it here too.
 */
export function PageHead(props: { readonly title: string; readonly base: string; readonly referrer?: 'same-origin' | 'strict-origin' }) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content={props.referrer ?? 'same-origin'} />
      <title>{`${props.title} · Mailroom`}</title>
      <link rel="stylesheet" href={`${props.base}/assets/dashboard.css`} />
      {/* Said here, or every browser asks for /favicon.ico and logs its 404. */}
      <link rel="icon" type="image/svg+xml" href={`${props.base}/assets/icon.svg`} />
      <script src={`${props.base}/assets/dashboard.js`} defer />
    </head>
  );
}

export function ErrorPage(props: { readonly status: number; readonly code: string; readonly message: string; readonly csrfToken: string | null }) {
  return (
    <Layout title={`Error ${props.status}`} section="error" csrfToken={props.csrfToken}>
      <h1>{`Error ${props.status}`}</h1>
      <p class="error-text">{props.message}</p>
      <p class="muted">{props.code}</p>
    </Layout>
  );
}

export function LoginPage(props: { readonly csrfToken: string; readonly next: string; readonly failed: boolean }) {
  return (
    <Layout title="Log in" section="login" csrfToken={null}>
      <h1>Log in</h1>
      <p>
        Paste the dashboard token: <code>dashboard.token</code> in the config, <code>MAILROOM_DASHBOARD_TOKEN</code>, or the one{' '}
        <code>mailroom serve</code> printed when it started.
      </p>
      {props.failed ? <p class="error-text">That is not the dashboard token.</p> : null}
      <form method="post" action={`${BASE}/login`} class="login">
        <input type="hidden" name="csrf" value={props.csrfToken} />
        <input type="hidden" name="next" value={props.next} />
        <label>
          Token <input type="password" name="token" autocomplete="current-password" required autofocus />
        </label>
        <button type="submit">Log in</button>
      </form>
    </Layout>
  );
}
