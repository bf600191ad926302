/**
 * /admin, for the server's administrators: the people with an account
 * (GET /admin/users: name, email, administrator, disabled, storage used
 * against their quota), each disabled or enabled, made an administrator or
 * not, given their own quota (POST /admin/users/{userid}); and
 * invitations (POST /admin/invitations), the link shown to hand over when
 * the server sends no mail. Anyone else is told the page is for
 * administrators only; the API refuses them whatever the page shows.
 */
import { useState } from 'preact/hooks';
import { allPages, answer, type Schemas } from '../api.ts';
import { useSession } from '../session.ts';
import { FormError, formatBytes } from '../ui.tsx';
import { ActionButton, checkForm, FocusedHeading, formatDate, ListState, useLoaded } from '../settings/common.tsx';
import './admin.css';

type AdminUser = Schemas['AdminUser'];
type Invitation = Schemas['Invitation'];

const GB = 1_000_000_000;

function QuotaForm({ person, onSaved, onCancel }: { person: AdminUser; onSaved: (next: AdminUser) => void; onCancel: () => void }) {
  const { studio } = useSession();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const id = `quota-${person.id}`;
  const save = async (event: Event) => {
    event.preventDefault();
    const text = String(new FormData(event.currentTarget as HTMLFormElement).get('quota') ?? '').trim();
    const gigabytes = Number(text);
    if (text !== '' && !(Number.isFinite(gigabytes) && gigabytes >= 0)) return setError('Type the quota in GB (a number, 0 or more), or leave it empty for the server’s.');
    setBusy(true);
    const saved = await answer(studio.client.POST('/admin/users/{userid}', { params: { path: { userid: person.id } }, body: { storageQuota: text === '' ? null : Math.round(gigabytes * GB) } }));
    setBusy(false);
    if (!saved.ok) return setError(saved.refusal.detail);
    onSaved(saved.data);
  };
  return (
    <form class="inline quota" noValidate onSubmit={save}>
      <div class="field">
        <label for={id}>Quota in GB for {person.name ?? person.email}</label>
        {/* biome-ignore lint/a11y/noAutofocus: the field the person asked for by pressing Set quota. */}
        <input id={id} name="quota" type="text" inputMode="decimal" autoComplete="off" autoFocus defaultValue={person.storageQuota === null ? '' : String(person.storageQuota / GB)} aria-describedby={`${id}-hint`} />
        <p class="hint" id={`${id}-hint`}>
          Empty: the server’s quota applies.
        </p>
      </div>
      <div class="actions">
        <button type="submit" class="small" disabled={busy}>
          Save quota
        </button>
        <button type="button" class="secondary small" onClick={onCancel}>
          Cancel
        </button>
      </div>
      <FormError id={`${id}-error`} message={error} />
    </form>
  );
}

function PersonRow({ person: initial, self }: { person: AdminUser; self: boolean }) {
  const { studio } = useSession();
  const [person, setPerson] = useState(initial);
  const [error, setError] = useState<string>();
  const [quota, setQuota] = useState(false);
  const id = `person-${person.id}`;
  const update = (body: Schemas['UpdateUserRequest']) => async () => {
    const saved = await answer(studio.client.POST('/admin/users/{userid}', { params: { path: { userid: person.id } }, body }));
    if (saved.ok) setPerson(saved.data);
    return saved;
  };
  const storage = person.storageQuota === null ? `${formatBytes(person.storageUsed)} used` : `${formatBytes(person.storageUsed)} of ${formatBytes(person.storageQuota)} used`;
  return (
    <li class={person.disabled ? 'item person disabled' : 'item person'}>
      <div class="item-text" id={id}>
        <strong>
          {person.name ?? person.email}
          {self ? ' (you)' : ''}
        </strong>
        <span class="meta">{person.name ? person.email : ''}</span>
        <span class="meta">
          {[person.admin ? 'Administrator' : '', person.disabled ? 'Disabled' : '', person.emailVerified ? 'address verified' : 'address not verified', storage, `joined ${formatDate(person.timeCreated)}`].filter(Boolean).join(' · ')}
        </span>
      </div>
      <div class="item-actions">
        <ActionButton describedBy={id} action={update({ disabled: !person.disabled })} onRefused={setError}>
          {person.disabled ? 'Enable' : 'Disable'}
        </ActionButton>
        <ActionButton describedBy={id} action={update({ admin: !person.admin })} onRefused={setError}>
          {person.admin ? 'Remove administrator' : 'Make administrator'}
        </ActionButton>
        <button type="button" class="secondary small" aria-describedby={id} aria-expanded={quota} onClick={() => setQuota(!quota)}>
          Set quota
        </button>
      </div>
      <FormError id={`${id}-error`} message={error} />
      {quota ? (
        <QuotaForm
          person={person}
          onCancel={() => setQuota(false)}
          onSaved={(next) => {
            setPerson(next);
            setQuota(false);
          }}
        />
      ) : null}
    </li>
  );
}

function People() {
  const { studio, user } = useSession();
  const people = useLoaded(() => allPages((cursor) => studio.client.GET('/admin/users', { params: { query: { limit: 100, cursor } } })));
  const [query, setQuery] = useState('');
  const words = query.trim().toLocaleLowerCase().split(/\s+/).filter(Boolean);
  const shown = (people.data ?? []).filter((person) => words.every((word) => `${person.name ?? ''} ${person.email}`.toLocaleLowerCase().includes(word)));
  return (
    <section aria-labelledby="people-heading">
      <div class="page-head">
        <h2 id="people-heading">People</h2>
        <input type="search" aria-label="Search people" placeholder="Search people" value={query} onInput={(event) => setQuery(event.currentTarget.value)} />
      </div>
      <ul class="items" aria-labelledby="people-heading">
        <ListState error={people.error} loading={!people.data} />
        {people.data && shown.length === 0 ? <li class="empty">Nobody matches.</li> : null}
        {shown.map((person) => (
          <PersonRow key={person.id} person={person} self={person.id === user.id} />
        ))}
      </ul>
    </section>
  );
}

function Invite() {
  const { studio } = useSession();
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [made, setMade] = useState<Invitation>();
  const [copied, setCopied] = useState('');
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const invalid = checkForm(form);
    if (invalid) return setError(invalid);
    const data = new FormData(form);
    setBusy(true);
    setMade(undefined);
    const invited = await answer(studio.client.POST('/admin/invitations', { body: { email: String(data.get('email')).trim(), admin: data.get('admin') === 'on' } }));
    setBusy(false);
    if (!invited.ok) return setError(invited.refusal.detail);
    setError(undefined);
    setCopied('');
    form.reset();
    setMade(invited.data);
  };
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(made!.url);
      setCopied('Copied.');
    } catch {
      setCopied('Select the link and copy it.');
    }
  };
  return (
    <section aria-labelledby="invite-heading">
      <h2 id="invite-heading">Invitations</h2>
      <p class="hint">An invitation is a link to make an account with this address, once, within seven days.</p>
      <form id="invite-form" noValidate onSubmit={submit}>
        <div class="field">
          <label for="invite-email">Email</label>
          <input id="invite-email" name="email" type="email" required maxLength={254} autoComplete="off" spellcheck={false} />
        </div>
        <label class="check">
          <input type="checkbox" name="admin" /> Administrator
        </label>
        <FormError id="invite-form-error" message={error} />
        <button type="submit" disabled={busy}>
          Invite
        </button>
      </form>
      {made ? (
        <section key={made.id} class="secret" aria-labelledby="invitation-heading">
          <FocusedHeading id="invitation-heading">{made.mailed ? `Invitation mailed to ${made.email}` : `Invitation for ${made.email}`}</FocusedHeading>
          <p>{made.mailed ? `The link is on its way; it works until ${formatDate(made.expiresAt)}.` : `This server sends no mail: send this link to them yourself. It works once, until ${formatDate(made.expiresAt)}.`}</p>
          <div class="secret-row">
            <input type="text" readOnly aria-label="Invitation link" value={made.url} spellcheck={false} />
            <button type="button" class="secondary" onClick={copy}>
              Copy
            </button>
          </div>
          <p role="status">{copied}</p>
        </section>
      ) : null}
    </section>
  );
}

export function AdminPage() {
  const { user } = useSession();
  document.title = 'Administration · Audio Share';
  if (!user.admin) {
    return (
      <>
        <h1>Administration</h1>
        <p class="notice">This page is for administrators only. Ask an administrator of this server if you need something changed.</p>
      </>
    );
  }
  return (
    <>
      <h1>Administration</h1>
      <div class="admin">
        <People />
        <Invite />
      </div>
    </>
  );
}
