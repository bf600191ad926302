/**
 * Settings, Profile: the name the account's comments show (POST /me), its
 * email address, whether it is verified, and a way to verify it (a player
 * shared with this address opens to the account only once it is), and
 * whether its uploads stack themselves.
 */
import { useState } from 'preact/hooks';
import { answer } from '../api.ts';
import type { AccountApi } from '../../account/api.ts';
import { useSession } from '../session.ts';
import { FormEnd, FormError } from '../ui.tsx';

function NameSection() {
  const { studio, user, setUser } = useSession();
  const [error, setError] = useState<string>();
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const name = String(new FormData(event.currentTarget as HTMLFormElement).get('name') ?? '').trim();
    setDone('');
    setBusy(true);
    // An empty name removes it: comments then show "Project member", never the address.
    const saved = await answer(studio.client.POST('/me', { body: { name: name || null } }));
    setBusy(false);
    if (!saved.ok) return setError(saved.refusal.detail);
    setError(undefined);
    setUser(saved.data);
    setDone(name ? 'Saved. Your comments show this name.' : 'Saved. Your comments show "Project member" until you set a name.');
  };
  return (
    <section aria-labelledby="name-heading">
      <h2 id="name-heading">Name</h2>
      <form id="name-form" noValidate onSubmit={submit}>
        <div class="field">
          <label for="profile-name">Name</label>
          <input id="profile-name" name="name" type="text" autoComplete="name" maxLength={100} defaultValue={user.name ?? ''} aria-describedby="profile-name-hint" />
          <p class="hint" id="profile-name-hint">
            Shown beside your comments and replies. Leave it empty to show "Project member".
          </p>
        </div>
        <FormEnd errorId="name-form-error" error={error} done={done} busy={busy} label="Save" />
      </form>
    </section>
  );
}

function EmailSection({ account }: { account: AccountApi }) {
  const { user } = useSession();
  const [error, setError] = useState<string>();
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const send = async () => {
    setBusy(true);
    setError(undefined);
    setDone('');
    const sent = await account.sendEmailVerification();
    setBusy(false);
    if (!sent.ok) return setError(sent.refusal.detail);
    setDone(`A link is on its way to ${user.email}. Open it to verify the address.`);
  };
  return (
    <section aria-labelledby="email-heading">
      <h2 id="email-heading">Email address</h2>
      <p id="email-state">{user.emailVerified ? `${user.email}, verified.` : `${user.email}, not verified yet: players shared with this address open to you once it is.`}</p>
      {user.emailVerified ? null : (
        <div id="email-verify">
          <button type="button" id="send-verification" class="secondary" disabled={busy} onClick={send}>
            Send a verification link
          </button>
          <FormError id="email-verify-error" message={error} />
          <p class="form-done" id="email-verify-done" role="status">
            {done}
          </p>
        </div>
      )}
    </section>
  );
}

/**
 * Versions that stack themselves: on by default, an account preference
 * (User.autoStack) that the server applies to every upload of the account,
 * whichever client sends it. Saved as soon as it changes.
 */
function UploadsSection() {
  const { studio, user, setUser } = useSession();
  // The box follows the click at once (a control that springs back until the server answers is a broken control);
  // a refusal puts it back and says why.
  const [checked, setChecked] = useState(user.autoStack);
  const [error, setError] = useState<string>();
  const [done, setDone] = useState('');
  const change = async (event: Event) => {
    const autoStack = (event.currentTarget as HTMLInputElement).checked;
    setChecked(autoStack);
    setDone('');
    const saved = await answer(studio.client.POST('/me', { body: { autoStack } }));
    if (!saved.ok) {
      setChecked(!autoStack);
      return setError(saved.refusal.detail);
    }
    setError(undefined);
    setUser(saved.data);
    setDone(autoStack ? 'Saved. "Night Drive v2.wav" joins "Night Drive" as its newest version.' : 'Saved. Every upload lands as a file of its own.');
  };
  return (
    <section aria-labelledby="uploads-heading">
      <h2 id="uploads-heading">Uploads</h2>
      <label class="check">
        <input type="checkbox" checked={checked} onChange={change} aria-describedby="auto-stack-hint" /> Stack versions automatically
      </label>
      <p class="hint" id="auto-stack-hint">
        A file whose name ends in a version marker (v2, version 3, take 4, _2, -2, (2)) joins the file or stack of the same name as its newest version.
      </p>
      <FormError id="uploads-error" message={error} />
      <p class="form-done" role="status">
        {done}
      </p>
    </section>
  );
}

export function ProfileTab({ account }: { account: AccountApi }) {
  return (
    <>
      <NameSection />
      <EmailSection account={account} />
      <UploadsSection />
    </>
  );
}
