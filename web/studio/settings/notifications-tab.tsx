/**
 * Settings, Notifications: how the account is told of a new comment, a
 * reply, files through a portal or a failed analysis, by mail when the
 * server sends mail: "At once" (the default), "Daily digest" or "Never"
 * (GET/POST /me/notification-settings). They are in the inbox whatever
 * this says.
 */
import { useState } from 'preact/hooks';
import { answer, type Schemas } from '../api.ts';
import { useSession } from '../session.ts';
import { FormEnd, FormError } from '../ui.tsx';
import { useLoaded } from './common.tsx';

type Mail = Schemas['NotificationMail'];

const CHOICES: Array<[Mail, string, string]> = [
  ['immediate', 'At once', 'A mail for each, a moment after it happens.'],
  ['digest', 'Daily digest', 'One mail a day with everything new.'],
  ['never', 'Never', 'No mail: they wait in the inbox.'],
];

export function NotificationsTab() {
  const { studio } = useSession();
  const settings = useLoaded(() => answer(studio.client.GET('/me/notification-settings')));
  const config = useLoaded(() => answer(studio.client.GET('/auth/config')));
  const [error, setError] = useState<string>();
  const [done, setDone] = useState('');
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const mail = String(new FormData(event.currentTarget as HTMLFormElement).get('mail') ?? 'immediate') as Mail;
    setBusy(true);
    setDone('');
    const saved = await answer(studio.client.POST('/me/notification-settings', { body: { mail } }));
    setBusy(false);
    if (!saved.ok) return setError(saved.refusal.detail);
    setError(undefined);
    setDone('Saved.');
  };
  return (
    <section aria-labelledby="notifications-heading">
      <h2 id="notifications-heading">Notifications</h2>
      <p class="hint">A new comment, a reply to yours, files sent through a portal, a file that could not be analysed: always in the inbox, and by mail as you choose here.</p>
      {config.data && !config.data.mail ? <p class="notice">This server does not send mail: notifications are in the inbox only.</p> : null}
      <FormError id="notifications-load-error" message={settings.error} />
      {settings.data ? (
        <form id="notifications-form" noValidate onSubmit={submit}>
          <div role="radiogroup" aria-labelledby="mail-legend" class="group">
            <p id="mail-legend" class="group-label">
              Mail me
            </p>
            {CHOICES.map(([value, label, hint]) => (
              <div key={value} class="option">
                <label class="check">
                  <input type="radio" name="mail" value={value} defaultChecked={settings.data!.mail === value} aria-describedby={`mail-${value}-hint`} /> {label}
                </label>
                <p class="hint" id={`mail-${value}-hint`}>
                  {hint}
                </p>
              </div>
            ))}
          </div>
          <FormEnd errorId="notifications-form-error" error={error} done={done} busy={busy} label="Save" />
        </form>
      ) : settings.error ? null : (
        <p class="meta">Loading…</p>
      )}
    </section>
  );
}
