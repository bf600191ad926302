/**
 * The HTML of the account pages (the front door), those of someone
 * signed out: /setup, /signup, /signin, /reset-password and /verify-email
 * (the signed-in home at / and the settings are the studio's:
 * studio-shell.ts). The server renders each page's forms, with their
 * labels, hints and autocomplete attributes, so that the page has its final layout before any
 * script runs (no shift when the app wires it) and password managers see
 * the forms as they are. The bundled app (web/account/) reads which page it
 * is from `data-page` and drives the forms through the API.
 *
 * Nothing of a request is written into the HTML but the invitation in
 * /signup?invite=…, carried to the "Sign in" link, and it is escaped and
 * URL-encoded; every other value the pages show comes from the API and is
 * set as text by the app.
 */
import { escapeHtml } from '../lib/html.ts';
import { assetHref } from './page-assets.ts';


export const ACCOUNT_PAGES = ['setup', 'signup', 'signin', 'reset-password', 'verify-email'] as const;
export type AccountPage = (typeof ACCOUNT_PAGES)[number];

export interface AccountPageOptions {
  basePath: string;
  page: AccountPage;
  /** /signup?invite=… and /signin?invite=…: the invitation the page carries on to the other. */
  invite?: string;
  /** /reset-password?token=…: the page that takes the new password instead of the one that sends a link. */
  withToken?: boolean;
  /** REGISTRATION: /signin links to /signup only when anyone may sign up. */
  registration?: 'invite' | 'open' | 'closed';
}

const TITLES: Record<AccountPage, string> = {
  setup: 'Create the first account',
  signup: 'Create an account',
  signin: 'Sign in',
  'reset-password': 'Reset your password',
  'verify-email': 'Verify your email address',
};

/** A labelled field; `hint` is read with the field (aria-describedby). */
function field(id: string, label: string, attributes: string, hint?: string): string {
  const described = hint ? ` aria-describedby="${id}-hint"` : '';
  return `        <div class="field">
          <label for="${id}">${label}</label>
          <input id="${id}" ${attributes}${described}>
${hint ? `          <p class="hint" id="${id}-hint">${hint}</p>\n` : ''}        </div>`;
}

const NEW_PASSWORD_HINT = 'At least 12 characters. A phrase of several words is easy to remember and hard to guess.';
const nameField = field('name', 'Name', 'name="name" type="text" autocomplete="name" required maxlength="100"');
const emailField = field('email', 'Email', 'name="email" type="email" autocomplete="email" required maxlength="320" spellcheck="false" autocapitalize="none"');
const newPasswordField = (label = 'Password') =>
  field('password', label, 'name="password" type="password" autocomplete="new-password" required minlength="12" maxlength="1024"', NEW_PASSWORD_HINT);

/** The form's message (a problem's detail) and its button: the alert sits above the button, its room kept, so nothing moves when it shows. */
const formEnd = (button: string, id = 'form') => `        <p class="form-error" id="${id}-error" role="alert"></p>
        <button type="submit">${button}</button>`;

function signedOutBody({ basePath: b, page, invite, withToken, registration }: AccountPageOptions): string {
  const inviteQuery = invite ? `?invite=${escapeHtml(encodeURIComponent(invite))}` : '';
  switch (page) {
    case 'setup':
      return `      <h1>Create the first account</h1>
      <p class="lead">This account administers the server. The link that opened this page works once.</p>
      <form id="account-form" novalidate>
${nameField}
${emailField}
${newPasswordField()}
${formEnd('Create account')}
      </form>`;
    case 'signup':
      return `      <h1>Create an account</h1>
      <p class="lead" id="signup-lead">${invite ? 'You were invited: the account you create here gets what was shared with you.' : 'An account keeps your projects and the players you share.'}</p>
      <form id="account-form" novalidate>
${nameField}
${emailField}
${newPasswordField()}
${formEnd('Create account')}
      </form>
      <p class="aside">Already have an account? <a href="${b}/signin${inviteQuery}">Sign in</a></p>`;
    case 'signin':
      return `      <h1>Sign in</h1>
      <form id="account-form" novalidate>
${emailField}
${field('password', 'Password', 'name="password" type="password" autocomplete="current-password" required maxlength="1024"')}
${formEnd('Sign in')}
      </form>
      <p class="aside"><a href="${b}/reset-password">Forgot your password?</a></p>
      <div class="alternatives">
        <button type="button" id="passkey-signin" class="secondary">Sign in with a passkey</button>
        <button type="button" id="sso-signin" class="secondary" hidden></button>
        <p class="form-error" id="alternatives-error" role="alert"></p>
      </div>
${registration === 'open' ? `      <p class="aside" id="signup-link">New here? <a href="${b}/signup">Create an account</a></p>\n` : ''}`;
    case 'reset-password':
      if (withToken) {
        return `      <h1>Choose a new password</h1>
      <p class="lead">Setting it signs the account out everywhere, and ends its tokens, passkeys and connected apps.</p>
      <form id="account-form" novalidate>
${field('password', 'New password', 'name="password" type="password" autocomplete="new-password" required minlength="12" maxlength="1024"', NEW_PASSWORD_HINT)}
${formEnd('Set password')}
      </form>
      <section id="done" class="done" hidden>
        <h2 tabindex="-1">Your password is set</h2>
        <p id="ended">Signed out everywhere.</p>
        <p><a href="${b}/signin">Sign in</a> with the new password.</p>
      </section>`;
      }
      return `      <h1>Reset your password</h1>
      <p class="lead">Type the email address of your account: we send it a link to choose a new password.</p>
      <form id="account-form" novalidate>
${emailField}
${formEnd('Send reset link')}
      </form>
      <section id="done" class="done" hidden>
        <h2 tabindex="-1">Check your email</h2>
        <p>If an account uses this address, a link to reset its password is on its way. It works once, for an hour.</p>
      </section>
      <p class="aside"><a href="${b}/signin">Back to sign-in</a></p>`;
    case 'verify-email':
      return `      <h1>Verify your email address</h1>
      <p id="verify-status" role="status" aria-live="polite">Verifying…</p>
      <p class="aside"><a href="${b}/">Continue</a></p>`;
  }
}

export function renderAccountPage(options: AccountPageOptions): string {
  const { basePath, page } = options;
  const body = `    <main id="account" class="card" data-page="${page}" data-state="loading" data-api-base="${basePath}/api/v1" data-base-path="${basePath}">
      <p class="card-brand"><a href="${basePath}/">Audio Share</a></p>
${signedOutBody(options)}
    </main>`;
  return `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8">
    <meta name="viewport" content="width=device-width, initial-scale=1">
    <meta name="robots" content="noindex">
    <title>${escapeHtml(TITLES[page])}</title>
    <link rel="icon" href="${basePath}/favicon.ico" sizes="any">
    <link rel="icon" href="${assetHref(basePath, 'icon.svg')}" type="image/svg+xml">
    <link rel="stylesheet" href="${assetHref(basePath, 'account.css')}">
    <script type="module" src="${assetHref(basePath, 'account.js')}"></script>
  </head>
  <body>
${body}
    <noscript><p>These pages need JavaScript.</p></noscript>
  </body>
</html>
`;
}
