/**
 * The project page's small forms, each in the studio's Dialog: a name to
 * give (New folder, Rename, Version name) and a place to move to (Move to…).
 * Each says the server's refusal in the dialog, and closes on success.
 */
import { useState } from 'preact/hooks';
import type { Answer } from '../api.ts';
import { FormEnd } from '../ui.tsx';

/** One text field and a submit button; `submit` answers the API's answer, or a refusal of its own. */
export function NameForm({
  id,
  label,
  initial = '',
  action,
  maxLength,
  allowEmpty = false,
  submit,
  onClose,
}: {
  id: string;
  label: string;
  initial?: string;
  action: string;
  maxLength: number;
  allowEmpty?: boolean;
  submit: (value: string) => Promise<Answer<unknown>>;
  onClose: () => void;
}) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const onSubmit = async (event: Event) => {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget as HTMLFormElement).get('value') ?? '').trim();
    if (!value && !allowEmpty) return setError(`Type a ${label.toLowerCase()}.`);
    setBusy(true);
    const done = await submit(value);
    setBusy(false);
    if (!done.ok) return setError(done.refusal.detail);
    onClose();
  };
  return (
    <form onSubmit={onSubmit} noValidate>
      <div class="field">
        <label for={id}>{label}</label>
        <input id={id} name="value" type="text" defaultValue={initial} maxLength={maxLength} autoComplete="off" aria-invalid={error ? 'true' : undefined} aria-describedby={`${id}-error`} />
      </div>
      <FormEnd errorId={`${id}-error`} error={error} busy={busy} label={action} onCancel={onClose} />
    </form>
  );
}

/** "Move to…": the top level or one of the project's folders (those it may go into). */
export function MoveForm({
  folders,
  current,
  submit,
  onClose,
}: {
  folders: Array<{ id: string; path: string }>;
  current: string | undefined;
  submit: (folderid: string | null) => Promise<Answer<unknown>>;
  onClose: () => void;
}) {
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const onSubmit = async (event: Event) => {
    event.preventDefault();
    const value = String(new FormData(event.currentTarget as HTMLFormElement).get('target') ?? '');
    setBusy(true);
    const done = await submit(value === '' ? null : value);
    setBusy(false);
    if (!done.ok) return setError(done.refusal.detail);
    onClose();
  };
  return (
    <form onSubmit={onSubmit} noValidate>
      <fieldset class="move-targets">
        <legend>Destination</legend>
        <label class="radio">
          <input type="radio" name="target" value="" defaultChecked={!current} /> Top level
        </label>
        {folders.map((folder) => (
          <label class="radio" key={folder.id}>
            <input type="radio" name="target" value={folder.id} defaultChecked={current === folder.id} /> {folder.path}
          </label>
        ))}
      </fieldset>
      <FormEnd errorId="move-error" error={error} busy={busy} label="Move" onCancel={onClose} />
    </form>
  );
}
