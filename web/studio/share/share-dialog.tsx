/**
 * The Share dialog: makes a player of a project, a folder or a selection
 * (`folderid` or `boxids`), or edits an existing one (`player`).
 *
 * Every option is a labelled control that starts at the value the player
 * will get: an existing player's own, or for a new one the owner's default
 * (GET /me/preferences), else the interface's final default. A refusal is
 * shown next to the field its problem's JSON pointer names. Once the link
 * is made the dialog shows it (Copy link) and its embed code, and its
 * button saves changes to it from then on.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { JSX } from 'preact';
import { answer, type Player, type Schemas } from '../api.ts';
import { useSession } from '../session.ts';
import { Dialog, FormError } from '../ui.tsx';
import {
  createBody,
  errorsOfProblem,
  formForNew,
  formOfPlayer,
  PLATFORMS,
  QUALITIES,
  ROLES,
  SUBTITLES,
  updateBody,
  type Collaborator,
  type FieldErrors,
  type FieldKey,
  type Role,
  type ShareForm,
} from './share-form.ts';
import './share.css';

export interface ShareTarget {
  projectid: string;
  /** The player is scoped to this folder. */
  folderid?: string;
  /** The player is scoped to these boxes. */
  boxids?: string[];
}

type Invite = Schemas['CollaboratorInvite'];

/** The embed page of a player, beside its page (/p/{id} → /embed/{id}), in an iframe. */
export function embedCode(player: Player): string {
  const src = (player.playerUrl ?? '').replace(/\/p\/([^/?#]+)$/, '/embed/$1');
  const title = player.name.replace(/[&"<>]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<iframe src="${src}" title="${title}" width="100%" height="400" style="border:0" allow="autoplay"></iframe>`;
}

/** A field's error line, kept in the layout so nothing jumps; the control names it in aria-describedby. */
function FieldError({ id, message }: { id: string; message?: string }) {
  return message ? (
    <p class="form-error field-error" id={id}>
      {message}
    </p>
  ) : null;
}

/** The props a control gets for its error: described by its line, invalid while there is one. */
const errorProps = (errors: FieldErrors, key: FieldKey) => ({
  'aria-invalid': errors[key] ? ('true' as const) : undefined,
  'aria-describedby': errors[key] ? `share-${key}-error` : undefined,
});

/** The link, its Copy link button and the embed code. */
export function LinkBox({ player }: { player: Player }) {
  const [status, setStatus] = useState('');
  const link = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(player.playerUrl ?? '');
      setStatus('Copied');
    } catch {
      // No clipboard (permission refused, an insecure origin): the link selected, for the keyboard's copy.
      link.current?.select();
      setStatus('Selected: press Ctrl+C (⌘C) to copy it.');
    }
  };
  return (
    <div class="share-link">
      <div class="field">
        <label for="share-link">Link</label>
        <div class="share-link-row">
          <input ref={link} id="share-link" type="text" readOnly value={player.playerUrl ?? ''} onFocus={(event) => event.currentTarget.select()} />
          <button type="button" onClick={copy}>
            Copy link
          </button>
        </div>
        <p class="form-done" role="status">
          {status}
        </p>
      </div>
      <div class="field">
        <label for="share-embed">Embed code</label>
        <textarea id="share-embed" readOnly rows={3} value={embedCode(player)} onFocus={(event) => event.currentTarget.select()} />
      </div>
    </div>
  );
}

function Check({ label, checked, onChange, hint, role }: { label: string; checked: boolean; onChange: (value: boolean) => void; hint?: string; role?: 'switch' }) {
  // The hint describes the control without becoming part of its name.
  const hintId = hint ? `share-hint-${label.replace(/\W+/g, '-').toLowerCase()}` : undefined;
  return (
    <div class="check-row">
      <label class="check">
        <input type="checkbox" role={role} checked={checked} aria-describedby={hintId} onChange={(event) => onChange(event.currentTarget.checked)} />
        {label}
      </label>
      {hint ? (
        <span class="check-hint" id={hintId}>
          {hint}
        </span>
      ) : null}
    </div>
  );
}

function Select<T extends string>({
  id,
  label,
  value,
  choices,
  onChange,
  errors,
  field,
  disabled,
}: {
  id: string;
  label: string;
  value: T;
  choices: Array<[T, string]>;
  onChange: (value: T) => void;
  errors: FieldErrors;
  field: FieldKey;
  disabled?: boolean;
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} value={value} disabled={disabled} onChange={(event) => onChange(event.currentTarget.value as T)} {...errorProps(errors, field)}>
        {choices.map(([choice, text]) => (
          <option key={choice} value={choice}>
            {text}
          </option>
        ))}
      </select>
      <FieldError id={`share-${field}-error`} message={errors[field]} />
    </div>
  );
}

function TextField({
  id,
  label,
  field,
  errors,
  hint,
  ...input
}: { id: string; label: string; field: FieldKey; errors: FieldErrors; hint?: string } & JSX.InputHTMLAttributes<HTMLInputElement>) {
  const described = [errors[field] ? `share-${field}-error` : '', hint ? `${id}-hint` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} {...input} aria-invalid={errors[field] ? 'true' : undefined} aria-describedby={described} />
      {hint ? (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      ) : null}
      <FieldError id={`share-${field}-error`} message={errors[field]} />
    </div>
  );
}

/**
 * Who is invited: for a new player the list that goes with it; for an existing one, its collaborators, and each
 * new invitation made at once (inviteCollaborator).
 */
function Invites({
  invites,
  existing,
  onAdd,
  onRemove,
  errors,
}: {
  invites: Collaborator[];
  existing: Invite[] | null;
  onAdd: (invite: Collaborator) => Promise<string | undefined>;
  onRemove: (email: string) => void;
  errors: FieldErrors;
}) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('viewer');
  const [error, setError] = useState<string>();
  const invite = async () => {
    const address = email.trim();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(address)) return setError('Give an email address, like name@example.com.');
    const refused = await onAdd({ email: address, role });
    setError(refused);
    if (!refused) setEmail('');
  };
  const message = error ?? errors.invite;
  const people = [...(existing ?? []).map((one) => ({ email: one.email, role: one.role, used: one.inviteUsed })), ...invites.map((one) => ({ ...one, used: undefined }))];
  return (
    <fieldset class="share-group">
      <legend>Invite people</legend>
      <div class="share-invite">
          <div class="field">
            <label for="share-email">Email</label>
            <input
              id="share-email"
              type="email"
              autoComplete="off"
              value={email}
              onInput={(event) => setEmail(event.currentTarget.value)}
              onKeyDown={(event) => {
                // Enter invites, rather than submitting the whole dialog.
                if (event.key === 'Enter') {
                  event.preventDefault();
                  void invite();
                }
              }}
              aria-invalid={message ? 'true' : undefined}
              aria-describedby={message ? 'share-invite-error' : undefined}
            />
          </div>
          <div class="field">
            <label for="share-role">Role</label>
            <select id="share-role" value={role} onChange={(event) => setRole(event.currentTarget.value as Role)}>
              {ROLES.map(([value, text]) => (
                <option key={value} value={value}>
                  {text}
                </option>
              ))}
            </select>
          </div>
          <button type="button" class="secondary" onClick={() => void invite()}>
            Invite
          </button>
      </div>
      <p class="hint">Viewers listen; editors and admins may also change the project and its links. Each gets an invite link, mailed when this server sends mail.</p>
      <FieldError id="share-invite-error" message={message} />
      {people.length ? (
        <ul class="share-people" aria-label="Invited">
          {people.map((person) => (
            <li key={person.email}>
              <span class="share-person">{person.email}</span>
              <span class="tag">{person.role}</span>
              {person.used === undefined ? <span class="meta">invited with the link</span> : person.used ? <span class="meta">joined</span> : <span class="meta">invited</span>}
              <button type="button" class="secondary small" aria-label={`Remove ${person.email}`} onClick={() => onRemove(person.email)}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      ) : null}
    </fieldset>
  );
}

function ShareFields({ target, player: initial, onMade, onDone }: { target?: ShareTarget; player?: Player; onMade: (player: Player) => void; onDone: (player?: Player) => void }) {
  const { studio } = useSession();
  const [player, setPlayer] = useState<Player | undefined>(initial);
  const [form, setForm] = useState<ShareForm | null>(initial ? formOfPlayer(initial) : null);
  const [payments, setPayments] = useState(false);
  const [existing, setExisting] = useState<Invite[] | null>(null);
  const [errors, setErrors] = useState<FieldErrors>({});
  const [busy, setBusy] = useState(false);
  const [created, setCreated] = useState(false);
  const formRef = useRef<HTMLFormElement>(null);
  const projectid = initial?.projectid ?? target?.projectid ?? '';

  useEffect(() => {
    let live = true;
    void (async () => {
      const [project, provider, preferences, collaborators] = await Promise.all([
        // A new link needs the project's name and abilities; a player being edited carries its own abilities.
        initial ? null : answer(studio.client.GET('/projects/{projectid}', { params: { path: { projectid } } })),
        answer(studio.client.GET('/me/payment-provider')),
        initial ? null : answer(studio.client.GET('/me/preferences')),
        initial ? answer(studio.client.GET('/players/{playerid}/collaborators', { params: { path: { playerid: initial.id } } })) : null,
      ]);
      if (!live) return;
      // The paywall pays the owner's connected account: it is offered to whoever the server says may set it
      // (abilities.sell, the owner alone), once their account is connected.
      const maySell = initial ? initial.abilities.sell : !!project?.ok && project.data.abilities.sell;
      setPayments(maySell && provider.ok && provider.data.connected);
      if (collaborators?.ok) setExisting(collaborators.data);
      if (!initial) {
        const name = project?.ok ? project.data.name : '';
        setForm(formForNew(name, preferences?.ok ? preferences.data : undefined));
      }
    })();
    return () => {
      live = false;
    };
  }, [studio, projectid, initial]);

  // Once the form is drawn, the focus is in its first field (showModal gave it to the Close button, the only control then).
  const loaded = form !== null;
  useEffect(() => {
    if (loaded) document.getElementById('share-name')?.focus();
  }, [loaded]);

  // After a refusal, the first field it names takes the focus.
  const refused = useRef(false);
  useEffect(() => {
    if (!refused.current) return;
    refused.current = false;
    formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]')?.focus();
  }, [errors]);

  if (!form) {
    return (
      <p class="meta" aria-live="polite">
        Loading…
      </p>
    );
  }

  const set = <K extends keyof ShareForm>(key: K, value: ShareForm[K]) => {
    setForm((before) => (before ? { ...before, [key]: value } : before));
    // A field changed is a field answered: its refusal goes (the others stay until the next try).
    if (key in errors) setErrors(({ [key as FieldKey]: _gone, ...rest }) => rest);
  };
  const editing = !!player;

  const submit = async (event: Event) => {
    event.preventDefault();
    refused.current = true;
    if (!form.name.trim()) return setErrors({ name: 'Give the link a name.' });
    const body = player ? updateBody(form, player) : createBody(form, target!);
    if (Array.isArray(body)) return setErrors({ [body[0]]: body[1] });
    setBusy(true);
    const result = player
      ? await studio.client.POST('/players/{playerid}', { params: { path: { playerid: player.id } }, body: body as Schemas['UpdatePlayerRequest'] }).catch(() => null)
      : await studio.client.POST('/players', { body: body as Schemas['CreatePlayerRequest'] }).catch(() => null);
    setBusy(false);
    if (!result) return setErrors({ form: 'The server could not be reached. Check your connection and try again.' });
    if (!result.data) return setErrors(errorsOfProblem(result.error as Partial<Schemas['Problem']>, result.response.status));
    setErrors({});
    const saved = result.data;
    if (player) return onDone(saved);
    // Made: the link shows at the top, and the dialog edits the new player from now on.
    setPlayer(saved);
    onMade(saved);
    setForm({ ...formOfPlayer(saved) });
    setCreated(true);
    const invited = await answer(studio.client.GET('/players/{playerid}/collaborators', { params: { path: { playerid: saved.id } } }));
    if (invited.ok) setExisting(invited.data);
    requestAnimationFrame(() => document.getElementById('share-link')?.focus());
  };

  const addInvite = async (invite: Collaborator): Promise<string | undefined> => {
    const email = invite.email.toLowerCase();
    if (form.invites.some((one) => one.email.toLowerCase() === email) || existing?.some((one) => one.email.toLowerCase() === email)) return `${invite.email} is invited already.`;
    if (!player) {
      // A new link: the invitations go with it when it is made.
      set('invites', [...form.invites, invite]);
      return undefined;
    }
    const invited = await answer(studio.client.PUT('/players/{playerid}/collaborators/{email}', { params: { path: { playerid: player.id, email: invite.email } }, body: { role: invite.role } }));
    if (!invited.ok) return invited.refusal.detail;
    setExisting((before) => [...(before ?? []), invited.data]);
    return undefined;
  };
  const removeInvite = async (email: string) => {
    if (form.invites.some((one) => one.email === email)) return set('invites', form.invites.filter((one) => one.email !== email));
    if (!player) return;
    const removed = await answer(studio.client.DELETE('/players/{playerid}/collaborators/{email}', { params: { path: { playerid: player.id, email } } }));
    if (!removed.ok) return setErrors({ invite: removed.refusal.detail });
    setExisting((before) => (before ?? []).filter((one) => one.email !== email));
  };

  return (
    <form ref={formRef} onSubmit={submit} noValidate class="share-form">
      {player ? (
        <>
          {created ? (
            <p class="form-done" role="status">
              The link is ready.
            </p>
          ) : null}
          <LinkBox player={player} />
        </>
      ) : null}
      <TextField id="share-name" label="Player name" field="name" errors={errors} type="text" maxLength={200} autoComplete="off" value={form.name} onInput={(event) => set('name', event.currentTarget.value)} />

      <div class="share-group" role="radiogroup" aria-labelledby="share-who">
        <p class="share-legend" id="share-who">
          Who can open it
        </p>
        <label class="check">
          <input type="radio" name="share-public" checked={form.public} onChange={() => set('public', true)} />
          Anyone with the link
        </label>
        <label class="check">
          <input type="radio" name="share-public" checked={!form.public} onChange={() => set('public', false)} />
          Only people I invite
        </label>
      </div>

      <fieldset class="share-group">
        <legend>Listeners get</legend>
        <p class="hint">{editing ? 'What this link offers now.' : 'Each option starts at your default (Settings, Player defaults).'}</p>
        <div class="share-checks">
          <Check label="Downloads" checked={form.downloads} onChange={(value) => set('downloads', value)} />
          <Check label="Comments" checked={form.comments} onChange={(value) => set('comments', value)} />
          <Check label="All versions" hint="every version of a stack" checked={form.stacks} onChange={(value) => set('stacks', value)} />
          <Check label="Show metadata" checked={form.metadata} onChange={(value) => set('metadata', value)} />
          <Check label="Show ISRC" checked={form.isrc} onChange={(value) => set('isrc', value)} />
          <Check label="Download notice" hint="after a download" checked={form.serviceCTA} onChange={(value) => set('serviceCTA', value)} />
          <Check label="Studio branding" checked={form.studio} onChange={(value) => set('studio', value)} />
          <Check label="Loudness match" checked={form.loudnessMatch} onChange={(value) => set('loudnessMatch', value)} />
        </div>
        <div class="share-row">
          <Select
            id="share-platform"
            label="Loudness platform"
            field="loudnessPlatform"
            errors={errors}
            value={form.loudnessPlatform}
            // An existing player's platform cannot be taken away (updates only set options), so "None" goes once one is set.
            choices={[...(editing && player?.options.loudnessPlatform ? [] : [['', 'None (−14 LUFS)'] as ['', string]]), ...PLATFORMS]}
            onChange={(value) => set('loudnessPlatform', value)}
          />
          <TextField
            id="share-lufs"
            label="Target LUFS"
            field="targetLufs"
            errors={errors}
            type="number"
            min={-60}
            max={0}
            step={0.5}
            inputMode="decimal"
            placeholder="platform's"
            value={form.targetLufs}
            onInput={(event) => set('targetLufs', event.currentTarget.value)}
          />
        </div>
        <div class="share-row">
          <Select
            id="share-quality"
            label="Quality"
            field="quality"
            errors={errors}
            value={form.quality}
            choices={[...(editing && player?.options.quality ? [] : [['', 'Automatic'] as ['', string]]), ...QUALITIES]}
            onChange={(value) => set('quality', value)}
          />
          <Select id="share-subtitle" label="Subtitle" field="boxSubtitle" errors={errors} value={form.boxSubtitle} choices={SUBTITLES} disabled={editing} onChange={(value) => set('boxSubtitle', value)} />
        </div>
        {editing ? <p class="hint">The subtitle is set when the link is made.</p> : null}
      </fieldset>

      <fieldset class="share-group">
        <legend>Protection</legend>
        <div class="share-row">
          <TextField
            id="share-password"
            label="Password"
            field="password"
            errors={errors}
            type="password"
            autoComplete="new-password"
            hint={player?.hasPassword ? 'This link has a password: type a new one to change it.' : 'Optional, at least 4 characters.'}
            value={form.password}
            disabled={form.removePassword}
            onInput={(event) => set('password', event.currentTarget.value)}
          />
          <TextField
            id="share-expires"
            label="Expires"
            field="expires"
            errors={errors}
            type="datetime-local"
            hint="Empty: never."
            value={form.expires}
            onInput={(event) => set('expires', event.currentTarget.value)}
          />
        </div>
        {player?.hasPassword ? <Check label="Remove the password" checked={form.removePassword} onChange={(value) => set('removePassword', value)} /> : null}
      </fieldset>

      <Invites invites={form.invites} existing={existing} onAdd={addInvite} onRemove={removeInvite} errors={errors} />

      {payments ? (
        <fieldset class="share-group">
          <legend>Paywall</legend>
          <Check role="switch" label="Paywall" hint="listeners pay you through Stripe" checked={form.paywall} onChange={(value) => set('paywall', value)} />
          <FieldError id="share-paywall-error" message={errors.paywall} />
          {form.paywall ? (
            <div class="share-row">
              <TextField id="share-price" label="Price" field="price" errors={errors} type="text" inputMode="decimal" hint="In US dollars." value={form.price} onInput={(event) => set('price', event.currentTarget.value)} />
              <Select
                id="share-unlocks"
                label="Unlocks"
                field="paywall"
                errors={{}}
                value={form.fulfillment}
                choices={[
                  ['allow-download', 'Downloads'],
                  ['allow-access', 'Listening'],
                ]}
                onChange={(value) => set('fulfillment', value)}
              />
              <Select
                id="share-for"
                label="For whom"
                field="paywall"
                errors={{}}
                value={form.recipient}
                choices={[
                  ['customer', 'The buyer'],
                  ['everyone', 'Every listener'],
                ]}
                onChange={(value) => set('recipient', value)}
              />
            </div>
          ) : null}
        </fieldset>
      ) : null}

      <fieldset class="share-group">
        <legend>Upload portal</legend>
        <Check role="switch" label="Upload portal" hint="listeners send you files" checked={form.portal} onChange={(value) => set('portal', value)} />
        <FieldError id="share-portal-error" message={errors.portal} />
        {form.portal ? (
          <>
            <TextField id="share-portal-title" label="Portal title" field="portalTitle" errors={errors} type="text" maxLength={200} value={form.portalTitle} onInput={(event) => set('portalTitle', event.currentTarget.value)} />
            <div class="field">
              <label for="share-portal-greeting">Greeting</label>
              <textarea
                id="share-portal-greeting"
                rows={2}
                maxLength={2000}
                value={form.portalGreeting}
                onInput={(event) => set('portalGreeting', event.currentTarget.value)}
                {...errorProps(errors, 'portalGreeting')}
              />
              <FieldError id="share-portalGreeting-error" message={errors.portalGreeting} />
            </div>
            <TextField
              id="share-portal-redirect"
              label="Redirect after upload"
              field="portalRedirect"
              errors={errors}
              type="url"
              placeholder="https://"
              value={form.portalRedirect}
              onInput={(event) => set('portalRedirect', event.currentTarget.value)}
            />
          </>
        ) : null}
      </fieldset>

      <FormError id="share-error" message={errors.form} />
      <div class="actions share-actions">
        <button type="submit" disabled={busy}>
          {player ? 'Save' : 'Create link'}
        </button>
        <button type="button" class="secondary" onClick={() => onDone(created ? player : undefined)}>
          {created ? 'Done' : 'Cancel'}
        </button>
      </div>
    </form>
  );
}

export function ShareDialog({ target, player, open, onClose }: { target?: ShareTarget; player?: Player; open: boolean; onClose: (saved?: Player) => void }) {
  // The latest player the dialog made or saved, given back when it closes however it closes.
  const latest = useRef<Player | undefined>(undefined);
  useEffect(() => {
    if (open) latest.current = undefined;
  }, [open]);
  const done = (saved?: Player) => onClose(saved ?? latest.current);
  return (
    <Dialog title="Share" open={open} onClose={() => done()}>
      <ShareFields
        target={target}
        player={player}
        onMade={(made) => {
          latest.current = made;
        }}
        onDone={(saved) => {
          latest.current = saved;
          done(saved);
        }}
      />
    </Dialog>
  );
}
