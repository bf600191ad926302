/**
 * The pages of someone not signed in: /setup, /signup, /signin,
 * /reset-password and /verify-email. The server rendered their forms
 * (server/pages/account-shell.ts); this wires them to the API. A success
 * that starts a session (setup, sign-up, sign-in) goes to the home page.
 */
import type { AccountApi, AuthConfig, EndedAccess } from './api.ts';
import { endedAccessInWords } from './ended-access.ts';
import { showError, value, wireForm } from './forms.ts';
import { signInWithPasskey } from './passkeys.ts';
import { nextAfterSignIn, safeNext } from '../../shared/next-path.ts';
import { ssoErrorMessage } from '../../shared/sso-errors.ts';

export interface PageContext {
  api: AccountApi;
  basePath: string;
  root: HTMLElement;
  params: URLSearchParams;
}

const form = () => document.getElementById('account-form') as HTMLFormElement;
const formError = () => document.getElementById('form-error')!;

/** Where a new session lands: the home page, replacing this page in the history (Back does not return to a spent form). */
const goHome = ({ basePath }: PageContext) => window.location.replace(`${basePath}/`);

/**
 * Where a sign-in lands: back to the page that sent the person here, when that is an app's consent page
 * (/signin?next=/oauth/interaction/…); else home (next-path.ts: `next` is never an open redirect).
 */
const goNext = (ctx: PageContext) => window.location.replace(nextAfterSignIn(ctx.basePath, ctx.params.get('next')));

/** Hides the form and says why, for a page whose form could not succeed (a spent setup link, sign-up by invitation only). */
function replaceForm(ctx: PageContext, message: string, link?: { href: string; text: string }): void {
  form().hidden = true;
  const lead = ctx.root.querySelector('.lead') ?? ctx.root.querySelector('h1')!;
  const note = document.createElement('p');
  note.className = 'notice';
  note.textContent = message;
  if (link) {
    const anchor = document.createElement('a');
    anchor.href = link.href;
    anchor.textContent = link.text;
    note.append(' ', anchor);
  }
  lead.after(note);
}

async function config(ctx: PageContext): Promise<AuthConfig | undefined> {
  const answer = await ctx.api.authConfig();
  return answer.ok ? answer.data : undefined;
}

export async function setupPage(ctx: PageContext): Promise<void> {
  const token = ctx.params.get('token') ?? '';
  const settings = await config(ctx);
  if (settings && !settings.setupRequired) {
    replaceForm(ctx, 'This server has its first account already.', { href: `${ctx.basePath}/signin`, text: 'Sign in' });
    return;
  }
  if (!token) {
    replaceForm(ctx, 'This page needs the link the server printed when it started (…/setup?token=…). The admin CLI prints a new one.');
    return;
  }
  const f = form();
  f.dataset.keepBusy = 'true';
  wireForm(
    f,
    formError(),
    () => ctx.api.createFirstAccount({ token, name: value(f, 'name'), email: value(f, 'email'), password: value(f, 'password') }),
    () => goHome(ctx),
  );
}

export async function signupPage(ctx: PageContext): Promise<void> {
  const invite = ctx.params.get('invite') ?? undefined;
  const settings = await config(ctx);
  if (settings && !invite && settings.registration !== 'open') {
    replaceForm(
      ctx,
      settings.registration === 'invite'
        ? 'Accounts on this server are made by invitation: ask its administrator, or the person who shared a player with you, for an invitation link.'
        : 'This server takes no new accounts. Its administrator makes them.',
      { href: `${ctx.basePath}/signin`, text: 'Sign in' },
    );
    return;
  }
  const f = form();
  f.dataset.keepBusy = 'true';
  wireForm(
    f,
    formError(),
    () => ctx.api.signUp({ name: value(f, 'name'), email: value(f, 'email'), password: value(f, 'password'), ...(invite ? { invite } : {}) }),
    (answer) => {
      // Open registration on a server that sends mail: the account is made from the link mailed to the address.
      if (!('id' in answer)) {
        replaceForm(ctx, `We sent a mail to ${answer.email}: open its link to finish signing up (look in the spam folder too). If that address has an account already, the mail says so, and how to sign in.`, {
          href: `${ctx.basePath}/signin`,
          text: 'Sign in',
        });
        return;
      }
      goHome(ctx);
    },
  );
}

export async function signinPage(ctx: PageContext): Promise<void> {
  // Someone signed in never gets here: the server sends them to / (server/pages/account-pages.ts).
  const f = form();
  f.dataset.keepBusy = 'true';
  // Arriving from an invitation's sign-up page (its "Sign in" link carries the invite): its access joins this account.
  const invite = ctx.params.get('invite') ?? undefined;
  wireForm(f, formError(), () => ctx.api.signIn({ email: value(f, 'email'), password: value(f, 'password'), ...(invite ? { invite } : {}) }), () => goNext(ctx));

  const alternatives = document.getElementById('alternatives-error')!;
  const passkey = document.getElementById('passkey-signin') as HTMLButtonElement;
  passkey.addEventListener('click', async () => {
    showError(alternatives, undefined);
    passkey.disabled = true;
    try {
      await signInWithPasskey(ctx.api.client);
      goNext(ctx);
    } catch (error) {
      passkey.disabled = false;
      // Closing the browser's passkey dialog is a change of mind, not an error to show.
      if (!(error as { cancelled?: boolean }).cancelled) showError(alternatives, (error as Error).message || 'The passkey did not sign you in.');
    }
  });

  const settings = await config(ctx);
  // Single sign-on that did not sign the person in comes back here with a code (/signin?error=sso-cancelled): its words.
  const ssoError = ssoErrorMessage(ctx.params.get('error'), settings?.sso?.name ?? 'Single sign-on');
  if (ssoError) showError(alternatives, ssoError);
  if (settings?.sso) {
    const sso = document.getElementById('sso-signin') as HTMLButtonElement;
    sso.textContent = `Sign in with ${settings.sso.name}`;
    sso.hidden = false;
    // A navigation, not a call: the provider's page takes over, and comes back to /auth/oidc/callback. The consent page
    // that sent the person here goes along (`next`), so single sign-on returns to it as the password does.
    const next = safeNext(ctx.basePath, ctx.params.get('next'));
    const start = `${ctx.basePath}/auth/oidc/start${next ? `?next=${encodeURIComponent(next)}` : ''}`;
    sso.addEventListener('click', () => window.location.assign(start));
  }
}

export function resetPasswordPage(ctx: PageContext): void {
  const token = ctx.params.get('token');
  const f = form();
  const done = document.getElementById('done')!;
  const finish = () => {
    f.hidden = true;
    done.hidden = false;
    done.querySelector('h2')?.focus();
  };
  if (token) {
    // What the reset ended, in words: every session, and the tokens, passkeys and apps made before it.
    const saySigned = (ended: EndedAccess) => {
      document.getElementById('ended')!.textContent = endedAccessInWords(ended);
      finish();
    };
    wireForm(f, formError(), () => ctx.api.completePasswordReset(token, value(f, 'password')), saySigned);
  } else {
    // The same answer whether an account has this address or not: the page says so in words that hold either way.
    wireForm(f, formError(), () => ctx.api.requestPasswordReset(value(f, 'email')), finish);
  }
}

export async function verifyEmailPage(ctx: PageContext): Promise<void> {
  const status = document.getElementById('verify-status')!;
  const token = ctx.params.get('token');
  if (!token) {
    status.textContent = 'This link is incomplete: open the whole link from the mail.';
    status.classList.add('error');
    return;
  }
  const answer = await ctx.api.verifyEmail(token);
  if (answer.ok) {
    status.textContent = 'Your email address is verified.';
    status.classList.add('ok');
  } else {
    status.textContent = answer.refusal.detail;
    status.classList.add('error');
  }
}
