/**
 * Settings, Security: the password, the passkeys (web/account/passkeys.ts
 * makes them with the browser), where the account is signed in (each
 * session ended from here, or all but this one), and what happened to the
 * account's security lately.
 */
import { useState } from 'preact/hooks';
import { answer, type Schemas } from '../api.ts';
import type { AccountApi } from '../../account/api.ts';
import { addPasskey } from '../../account/passkeys.ts';
import { endedAccessInWords } from '../../account/ended-access.ts';
import { useSession } from '../session.ts';
import { FormError, formatTime } from '../ui.tsx';
import { ActionButton, checkForm, device, formatDate, ListState, useLoaded, type Loaded } from './common.tsx';

type Passkey = Schemas['Passkey'];
type Session = Schemas['Session'];
type SecurityEvent = Schemas['SecurityEvent'];

const METHODS: Record<string, string> = { password: 'password', passkey: 'passkey', oidc: 'single sign-on', setup: 'setup link', signup: 'sign-up', reset: 'password reset' };

const EVENTS: Record<SecurityEvent['kind'], string> = {
  signin: 'Signed in',
  'signin-failed': 'A sign-in failed',
  signout: 'Signed out',
  'password-changed': 'Password changed',
  'password-reset': 'Password reset',
  'token-created': 'Access token created',
  'token-revoked': 'Access token revoked',
  'passkey-added': 'Passkey added',
  'passkey-removed': 'Passkey removed',
  'session-ended': 'Session ended',
  'email-verified': 'Email address verified',
  'account-created': 'Account created',
  'identity-linked': 'Single sign-on identity linked',
};

function PasswordSection({ account, onChanged }: { account: AccountApi; onChanged: () => Promise<void> }) {
  const { user } = useSession();
  const [error, setError] = useState<string>();
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    setDone('');
    const invalid = checkForm(form);
    if (invalid) return setError(invalid);
    setError(undefined);
    setBusy(true);
    const data = new FormData(form);
    const answer = await account.changePassword(String(data.get('current-password')), String(data.get('new-password')));
    setBusy(false);
    if (!answer.ok) {
      // A wrong password is typed again, and nothing secret stays on screen.
      for (const input of form.querySelectorAll<HTMLInputElement>('input[type="password"]')) input.value = '';
      form.querySelector<HTMLInputElement>('input[type="password"]')?.focus();
      return setError(answer.refusal.detail);
    }
    form.reset();
    setDone(`Your password is changed. ${endedAccessInWords(answer.data, { keptThisSession: true })}`);
    await onChanged();
  };
  return (
    <section aria-labelledby="password-heading">
      <h2 id="password-heading">Password</h2>
      <form id="password-form" noValidate onSubmit={submit} aria-busy={busy ? 'true' : 'false'}>
        <input type="email" name="username" autoComplete="username" hidden value={user.email} readOnly />
        <div class="field">
          <label for="current-password">Current password</label>
          <input id="current-password" name="current-password" type="password" autoComplete="current-password" required maxLength={1024} />
        </div>
        <div class="field">
          <label for="new-password">New password</label>
          <input id="new-password" name="new-password" type="password" autoComplete="new-password" required minLength={12} maxLength={1024} aria-describedby="new-password-hint" />
          <p class="hint" id="new-password-hint">
            At least 12 characters. Changing it signs you out everywhere else.
          </p>
        </div>
        <FormError id="password-form-error" message={error} />
        <p class="form-done" id="password-form-done" role="status">
          {done}
        </p>
        <button type="submit" disabled={busy}>
          Change password
        </button>
      </form>
    </section>
  );
}

function PasskeyRow({ account, passkey, onError, reload }: { account: AccountApi; passkey: Passkey; onError: (detail?: string) => void; reload: () => Promise<void> }) {
  const [renaming, setRenaming] = useState(false);
  const [busy, setBusy] = useState(false);
  const id = `passkey-${passkey.id}`;
  if (renaming) {
    const save = async (event: Event) => {
      event.preventDefault();
      const name = String(new FormData(event.currentTarget as HTMLFormElement).get('name') ?? '').trim();
      if (!name) return onError('Type a name for the passkey.');
      setBusy(true);
      const answer = await account.renamePasskey(passkey.id, name);
      setBusy(false);
      if (!answer.ok) return onError(answer.refusal.detail);
      onError(undefined);
      setRenaming(false);
      await reload();
    };
    return (
      <li class="item">
        <form class="inline rename" noValidate onSubmit={save}>
          {/* biome-ignore lint/a11y/noAutofocus: the field the person asked for by pressing Rename. */}
          <input type="text" name="name" defaultValue={passkey.name} maxLength={100} required aria-label={`New name for the passkey ${passkey.name}`} autoFocus onFocus={(event) => event.currentTarget.select()} />
          <button type="submit" class="small" disabled={busy}>
            Save
          </button>
          <button type="button" class="secondary small" onClick={() => setRenaming(false)}>
            Cancel
          </button>
        </form>
      </li>
    );
  }
  const details = [passkey.timeCreated ? `added ${formatDate(passkey.timeCreated)}` : '', passkey.timeLastUsed ? `last used ${formatTime(passkey.timeLastUsed)}` : 'never used yet'].filter(Boolean).join(' · ');
  return (
    <li class="item">
      <div class="item-text" id={id}>
        <strong>{passkey.name}</strong>
        <span class="meta">{details}</span>
      </div>
      <div class="item-actions">
        <button type="button" class="secondary small" aria-describedby={id} onClick={() => setRenaming(true)}>
          Rename
        </button>
        <ActionButton describedBy={id} action={() => account.removePasskey(passkey.id)} onRefused={onError} onDone={reload}>
          Remove
        </ActionButton>
      </div>
    </li>
  );
}

function PasskeysSection({ account }: { account: AccountApi }) {
  const passkeys = useLoaded(() => account.listPasskeys());
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    setError(undefined);
    setBusy(true);
    try {
      await addPasskey(account.client, String(new FormData(form).get('passkey-name') ?? '').trim() || 'Passkey');
      form.reset();
      await passkeys.reload();
    } catch (failure) {
      // Closing the browser's passkey dialog is a change of mind, not an error to show.
      if (!(failure as { cancelled?: boolean }).cancelled) setError((failure as Error).message || 'The passkey was not added.');
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="passkeys-heading">
      <h2 id="passkeys-heading">Passkeys</h2>
      <p class="hint">A passkey signs you in with this device's lock (fingerprint, face, PIN) instead of a password.</p>
      <ul id="passkey-list" class="items" aria-labelledby="passkeys-heading">
        <ListState error={passkeys.error} loading={!passkeys.data} />
        {passkeys.data?.length === 0 ? <li class="empty">No passkey yet.</li> : null}
        {passkeys.data?.map((passkey) => (
          <PasskeyRow key={passkey.id} account={account} passkey={passkey} onError={setError} reload={passkeys.reload} />
        ))}
      </ul>
      <form id="passkey-form" class="inline" noValidate onSubmit={submit} aria-busy={busy ? 'true' : 'false'}>
        <div class="field">
          <label for="passkey-name">Passkey name</label>
          <input id="passkey-name" name="passkey-name" type="text" autoComplete="off" maxLength={100} placeholder="Laptop" />
        </div>
        <button type="submit" disabled={busy}>
          Add a passkey
        </button>
        <FormError id="passkey-form-error" message={error} />
      </form>
    </section>
  );
}

function SessionRow({ account, session, onError, reload }: { account: AccountApi; session: Session; onError: (detail?: string) => void; reload: () => Promise<void> }) {
  const id = `session-${session.id}`;
  const seen = session.timeLastSeen ?? session.timeCreated;
  const details = [
    session.address ?? '',
    session.method ? `signed in with ${METHODS[session.method] ?? session.method} ${formatDate(session.timeCreated)}` : `signed in ${formatDate(session.timeCreated)}`,
    `active ${formatTime(seen)}`,
  ]
    .filter(Boolean)
    .join(' · ');
  return (
    <li class={session.current ? 'item current' : 'item'}>
      <div class="item-text" id={id}>
        <strong title={session.userAgent ?? undefined}>{device(session.userAgent)}</strong>
        <span class="meta">{details}</span>
      </div>
      {session.current ? (
        <span class="badge">This device</span>
      ) : (
        <div class="item-actions">
          <ActionButton describedBy={id} action={() => account.endSession(session.id)} onRefused={onError} onDone={reload}>
            End session
          </ActionButton>
        </div>
      )}
    </li>
  );
}

function SessionsSection({ account, sessions }: { account: AccountApi; sessions: Loaded<Session[]> }) {
  const [error, setError] = useState<string>();
  // Nothing to end elsewhere: the button stays, greyed, so that the section does not jump.
  const noOthers = !!sessions.data && !sessions.data.some((session) => !session.current);
  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Sessions</h2>
      <p class="hint">Where your account is signed in now.</p>
      <ul id="session-list" class="items" aria-labelledby="sessions-heading">
        <ListState error={sessions.error} loading={!sessions.data} />
        {sessions.data?.map((session) => (
          <SessionRow key={session.id} account={account} session={session} onError={setError} reload={sessions.reload} />
        ))}
      </ul>
      <FormError id="sessions-error" message={error} />
      <ActionButton class="secondary" disabled={noOthers} action={() => account.endOtherSessions()} onRefused={setError} onDone={sessions.reload}>
        Sign out everywhere else
      </ActionButton>
    </section>
  );
}

function EventsSection({ events }: { events: Loaded<SecurityEvent[]> }) {
  return (
    <section aria-labelledby="events-heading">
      <h2 id="events-heading">Security events</h2>
      <p class="hint">What happened to your account's security lately, newest first.</p>
      <ul class="items events" aria-labelledby="events-heading">
        <ListState error={events.error} loading={!events.data} />
        {events.data?.length === 0 ? <li class="empty">Nothing yet.</li> : null}
        {events.data?.map((event) => (
          <li key={event.id} class="item">
            <div class="item-text">
              <strong>{EVENTS[event.kind] ?? event.kind}</strong>
              <span class="meta">
                {[formatTime(event.timeCreated), event.address ?? '', event.userAgent ? device(event.userAgent) : ''].filter(Boolean).join(' · ')}
              </span>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

export function SecurityTab({ account }: { account: AccountApi }) {
  const { studio } = useSession();
  const sessions = useLoaded(() => account.listSessions());
  // The last fifty: enough to notice what was not you; the API keeps 500.
  const events = useLoaded(() => answer(studio.client.GET('/me/security-events', { params: { query: { limit: 50 } } })));
  const refresh = async () => {
    await Promise.all([sessions.reload(), events.reload()]);
  };
  return (
    <>
      <PasswordSection account={account} onChanged={refresh} />
      <PasskeysSection account={account} />
      <SessionsSection account={account} sessions={{ ...sessions, reload: refresh }} />
      <EventsSection events={events} />
    </>
  );
}
