/**
 * The account pages' app: one bundle for all of them (/setup, /signup,
 * /signin, /reset-password and /verify-email; the home page at / and the
 * settings are the studio's, web/studio/).
 * One, not one per page: they share nearly all their code (the API calls,
 * the forms' checks and messages), the whole is small (a few KB),
 * and a browser that loaded it once for /signin has it for the next page.
 * The server says which page this is in `data-page` (server/pages/account-shell.ts).
 */
import './account.css';
import { AccountApi } from './api.ts';
import { resetPasswordPage, setupPage, signinPage, signupPage, verifyEmailPage, type PageContext } from './signed-out.ts';

const root = document.getElementById('account')!;
const ctx: PageContext = {
  api: new AccountApi(root.dataset.apiBase!),
  basePath: root.dataset.basePath ?? '',
  root,
  params: new URLSearchParams(window.location.search),
};

async function draw(): Promise<void> {
  switch (root.dataset.page) {
    case 'setup':
      return setupPage(ctx);
    case 'signup':
      return signupPage(ctx);
    case 'signin':
      return signinPage(ctx);
    case 'reset-password':
      return resetPasswordPage(ctx);
    case 'verify-email':
      return verifyEmailPage(ctx);
  }
}

// data-state says when the page is wired (tests, and the CSS that keeps signed-in content out of sight until then).
void draw().finally(() => {
  root.dataset.state = 'ready';
});
