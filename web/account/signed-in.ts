/**
 * The settings (/settings, tab Security) of someone signed in. The page
 * first asks the API who is signed in (GET /me); a visit without a session
 * goes to /signin. It carries the bar with "Sign out".
 */
import type { AccountApi, Answer, Passkey, Session, Token, User } from './api.ts';
import { element, formatDate, formatTime, setBusy, showError, value, wireForm } from './forms.ts';
import { addPasskey } from './passkeys.ts';
import type { PageContext } from './signed-out.ts';

/** The signed-in account, or a trip to /signin (undefined then: the page stops drawing). */
export async function signedInUser(ctx: PageContext): Promise<User | undefined> {
  const me = await ctx.api.me();
  if (me.ok) return me.data;
  if (me.refusal.status === 401) {
    window.location.replace(`${ctx.basePath}/signin`);
    return undefined;
  }
  const alert = element('p', 'form-error page-error', me.refusal.detail);
  alert.setAttribute('role', 'alert');
  ctx.root.prepend(alert);
  return undefined;
}

export function wireSignOut(ctx: PageContext): void {
  const button = document.getElementById('sign-out') as HTMLButtonElement;
  button.addEventListener('click', async () => {
    button.disabled = true;
    const answer = await ctx.api.signOut();
    // Signed out, or the session was over already (401): either way this browser is out.
    if (answer.ok || answer.refusal.status === 401) return window.location.replace(`${ctx.basePath}/signin`);
    button.disabled = false;
    window.alert(answer.refusal.detail);
  });
}

// ---- Settings, tab Security ----

/** "Firefox on Linux" from a User-Agent string, to tell sessions apart at a glance; the whole string is in the title. */
function device(userAgent: string | null | undefined): string {
  if (!userAgent) return 'Unknown device';
  const browser = /Edg\//.test(userAgent)
    ? 'Edge'
    : /Firefox\//.test(userAgent)
      ? 'Firefox'
      : /Chrom(e|ium)\//.test(userAgent)
        ? 'Chrome'
        : /Safari\//.test(userAgent)
          ? 'Safari'
          : /curl|node|undici/i.test(userAgent)
            ? 'A program'
            : 'A browser';
  const system = /Android/.test(userAgent)
    ? 'Android'
    : /iPhone|iPad/.test(userAgent)
      ? 'iOS'
      : /Windows/.test(userAgent)
        ? 'Windows'
        : /Mac OS X|Macintosh/.test(userAgent)
          ? 'macOS'
          : /Linux|X11/.test(userAgent)
            ? 'Linux'
            : '';
  return system ? `${browser} on ${system}` : browser;
}

const METHODS: Record<string, string> = { password: 'password', passkey: 'passkey', oidc: 'single sign-on', setup: 'setup link', signup: 'sign-up', reset: 'password reset' };

/** A list drawn from an answer: its items, or the refusal in the list's place. */
function drawList<T>(list: HTMLElement, answer: Answer<T[]>, empty: string, item: (entry: T) => HTMLLIElement): void {
  list.replaceChildren();
  if (!answer.ok) {
    const li = element('li', 'form-error', answer.refusal.detail);
    list.append(li);
    return;
  }
  if (answer.data.length === 0) list.append(element('li', 'empty', empty));
  for (const entry of answer.data) list.append(item(entry));
}

/** A button that runs `action` once at a time, showing its refusal in `alert`. */
function actionButton(text: string, describedBy: string, alert: HTMLElement, action: () => Promise<Answer<unknown>>, after: () => Promise<void>): HTMLButtonElement {
  const button = element('button', 'secondary small', text);
  button.type = 'button';
  button.setAttribute('aria-describedby', describedBy);
  button.addEventListener('click', async () => {
    button.disabled = true;
    showError(alert, undefined);
    const answer = await action();
    button.disabled = false;
    if (!answer.ok) return showError(alert, answer.refusal);
    await after();
  });
  return button;
}

let rowIds = 0;
const rowId = () => `row-${++rowIds}`;

export async function settingsPage(ctx: PageContext, user: User): Promise<void> {
  const { api } = ctx;
  (document.getElementById('password-username') as HTMLInputElement).value = user.email;
  emailSection(api, user);
  await Promise.all([passwordSection(ctx), passkeysSection(api), sessionsSection(api), tokensSection(api)]);
}

/** The address, whether it is verified, and a way to verify it: a player shared with this address opens to it only once it is. */
function emailSection(api: AccountApi, user: User): void {
  const state = document.getElementById('email-state')!;
  state.textContent = user.emailVerified ? `${user.email}, verified.` : `${user.email}, not verified yet: players shared with this address open to you once it is.`;
  if (user.emailVerified) return;
  const box = document.getElementById('email-verify')!;
  const button = document.getElementById('send-verification') as HTMLButtonElement;
  const alert = document.getElementById('email-verify-error')!;
  const done = document.getElementById('email-verify-done')!;
  box.hidden = false;
  button.addEventListener('click', async () => {
    button.disabled = true;
    showError(alert, undefined);
    done.textContent = '';
    const answer = await api.sendEmailVerification();
    button.disabled = false;
    if (!answer.ok) return showError(alert, answer.refusal);
    done.textContent = `A link is on its way to ${user.email}. Open it to verify the address.`;
  });
}

async function passwordSection(ctx: PageContext): Promise<void> {
  const form = document.getElementById('password-form') as HTMLFormElement;
  const done = document.getElementById('password-form-done')!;
  wireForm(
    form,
    document.getElementById('password-form-error')!,
    () => {
      done.textContent = '';
      return ctx.api.changePassword(value(form, 'current-password'), value(form, 'new-password'));
    },
    async () => {
      form.reset();
      done.textContent = 'Your password is changed, and every other session has ended.';
      await refreshSessions?.();
    },
  );
}

async function passkeysSection(api: AccountApi): Promise<void> {
  const list = document.getElementById('passkey-list')!;
  const form = document.getElementById('passkey-form') as HTMLFormElement;
  const alert = document.getElementById('passkey-form-error')!;
  const refresh = async () => drawList(list, await api.listPasskeys(), 'No passkey yet.', (passkey) => passkeyRow(api, passkey, alert, refresh));
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    showError(alert, undefined);
    setBusy(form, true);
    try {
      await addPasskey(api.client, value(form, 'passkey-name') || 'Passkey');
      form.reset();
      await refresh();
    } catch (error) {
      // Closing the browser's passkey dialog is a change of mind, not an error to show.
      if (!(error as { cancelled?: boolean }).cancelled) showError(alert, (error as Error).message || 'The passkey was not added.');
    } finally {
      setBusy(form, false);
    }
  });
  await refresh();
}

function passkeyRow(api: AccountApi, passkey: Passkey, alert: HTMLElement, refresh: () => Promise<void>): HTMLLIElement {
  const li = element('li', 'item');
  const id = rowId();
  const text = element('div', 'item-text');
  text.id = id;
  const name = element('strong', '', passkey.name);
  const details = [passkey.timeCreated ? `added ${formatDate(passkey.timeCreated)}` : '', passkey.timeLastUsed ? `last used ${formatTime(passkey.timeLastUsed)}` : 'never used yet'].filter(Boolean).join(' · ');
  text.append(name, element('span', 'meta', details));
  const rename = element('button', 'secondary small', 'Rename');
  rename.type = 'button';
  rename.setAttribute('aria-describedby', id);
  rename.addEventListener('click', () => {
    // In place: a small form with the name to change, Save and Cancel.
    const form = element('form', 'inline rename');
    form.noValidate = true;
    const input = element('input');
    input.type = 'text';
    input.value = passkey.name;
    input.maxLength = 100;
    input.required = true;
    input.setAttribute('aria-label', `New name for the passkey ${passkey.name}`);
    const save = element('button', 'small', 'Save');
    save.type = 'submit';
    const cancel = element('button', 'secondary small', 'Cancel');
    cancel.type = 'button';
    form.append(input, save, cancel);
    li.replaceChildren(form);
    input.focus();
    input.select();
    cancel.addEventListener('click', () => void refresh());
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      if (!input.value.trim()) return showError(alert, 'Type a name for the passkey.');
      setBusy(form, true);
      const answer = await api.renamePasskey(passkey.id, input.value.trim());
      setBusy(form, false);
      if (!answer.ok) return showError(alert, answer.refusal);
      showError(alert, undefined);
      await refresh();
    });
  });
  const remove = actionButton('Remove', id, alert, () => api.removePasskey(passkey.id), refresh);
  const actions = element('div', 'item-actions');
  actions.append(rename, remove);
  li.append(text, actions);
  return li;
}

let refreshSessions: (() => Promise<void>) | undefined;

async function sessionsSection(api: AccountApi): Promise<void> {
  const list = document.getElementById('session-list')!;
  const alert = document.getElementById('sessions-error')!;
  const endOthers = document.getElementById('end-other-sessions') as HTMLButtonElement;
  const refresh = async () => {
    const answer = await api.listSessions();
    drawList(list, answer, 'No session.', (session) => sessionRow(api, session, alert, refresh));
    // Nothing to end elsewhere: the button stays, greyed, so that the section does not jump.
    endOthers.disabled = answer.ok && !answer.data.some((session) => !session.current);
  };
  refreshSessions = refresh;
  endOthers.addEventListener('click', async () => {
    endOthers.disabled = true;
    showError(alert, undefined);
    const answer = await api.endOtherSessions();
    if (!answer.ok) showError(alert, answer.refusal);
    await refresh();
  });
  await refresh();
}

function sessionRow(api: AccountApi, session: Session, alert: HTMLElement, refresh: () => Promise<void>): HTMLLIElement {
  const li = element('li', session.current ? 'item current' : 'item');
  const id = rowId();
  const text = element('div', 'item-text');
  text.id = id;
  const name = element('strong', '', device(session.userAgent));
  if (session.userAgent) name.title = session.userAgent;
  const seen = session.timeLastSeen ?? session.timeCreated;
  const details = [
    session.address ?? '',
    session.method ? `signed in with ${METHODS[session.method] ?? session.method} ${formatDate(session.timeCreated)}` : `signed in ${formatDate(session.timeCreated)}`,
    `active ${formatTime(seen)}`,
  ]
    .filter(Boolean)
    .join(' · ');
  text.append(name, element('span', 'meta', details));
  li.append(text);
  if (session.current) {
    li.append(element('span', 'badge', 'This device'));
  } else {
    const actions = element('div', 'item-actions');
    actions.append(actionButton('End session', id, alert, () => api.endSession(session.id), refresh));
    li.append(actions);
  }
  return li;
}

async function tokensSection(api: AccountApi): Promise<void> {
  const list = document.getElementById('token-list')!;
  const form = document.getElementById('token-form') as HTMLFormElement;
  const alert = document.getElementById('token-form-error')!;
  const secret = document.getElementById('token-secret')!;
  const secretValue = document.getElementById('token-secret-value') as HTMLInputElement;
  const copied = document.getElementById('token-secret-copied')!;
  const expiry = document.getElementById('token-expiry') as HTMLInputElement;
  // The earliest expiry is tomorrow: a token that expires today at midnight is not worth making.
  const tomorrow = new Date(Date.now() + 86_400_000);
  expiry.min = `${tomorrow.getFullYear()}-${String(tomorrow.getMonth() + 1).padStart(2, '0')}-${String(tomorrow.getDate()).padStart(2, '0')}`;

  const refresh = async () => drawList(list, await api.listTokens(), 'No token yet.', (token) => tokenRow(api, token, alert, refresh));
  wireForm(
    form,
    alert,
    async () => {
      const scopes = [...form.querySelectorAll<HTMLInputElement>('input[name="scope"]:checked')].map((box) => box.value);
      if (scopes.length === 0) return { ok: false, refusal: { status: 0, detail: 'Choose at least one scope: what the token may do.' } };
      // The end of the chosen day, in this browser's time zone.
      const expiresAt = expiry.value ? new Date(`${expiry.value}T23:59:59.999`).getTime() : undefined;
      return api.createToken({ name: value(form, 'token-name'), scopes, ...(expiresAt ? { expiresAt } : {}) });
    },
    async (token) => {
      form.reset();
      // Shown once: the secret is in this field until the page is left, and the API never answers it again.
      secretValue.value = token.secret;
      copied.textContent = '';
      secret.hidden = false;
      secret.querySelector('h3')?.focus();
      await refresh();
    },
  );
  document.getElementById('token-secret-copy')!.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(secretValue.value);
      copied.textContent = 'Copied.';
    } catch {
      secretValue.select();
      copied.textContent = 'Select the token and copy it.';
    }
  });
  await refresh();
}

/** The ten scopes there are (a token made before scopes, or by the admin CLI, lists every one). */
const EVERY_SCOPE = 10;

function scopeText(scopes: Token['scopes']): string {
  if (scopes.length >= EVERY_SCOPE) return 'every scope';
  return scopes.join(', ');
}

function tokenRow(api: AccountApi, token: Token, alert: HTMLElement, refresh: () => Promise<void>): HTMLLIElement {
  const li = element('li', 'item');
  const id = rowId();
  const text = element('div', 'item-text');
  text.id = id;
  const details = [
    scopeText(token.scopes),
    token.expiresAt ? `expires ${formatDate(token.expiresAt)}` : 'never expires',
    token.lastUsedAt ? `last used ${formatTime(token.lastUsedAt)}` : 'never used',
  ].join(' · ');
  text.append(element('strong', '', token.name), element('span', 'meta', details));
  const actions = element('div', 'item-actions');
  actions.append(actionButton('Revoke', id, alert, () => api.revokeToken(token.id), refresh));
  li.append(text, actions);
  return li;
}
