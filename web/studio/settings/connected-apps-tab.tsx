/**
 * Settings, Connected apps: the apps this account let in at the consent
 * page (GET /me/connected-apps), each with what it may do in words, when it
 * was let in and when it last used the API; Revoke ends every token of it
 * at once (DELETE /me/connected-apps/{appid}), and the app must ask again.
 */
import { useState } from 'preact/hooks';
import { allPages, answer, type Schemas } from '../api.ts';
import { useSession } from '../session.ts';
import { FormError, formatTime } from '../ui.tsx';
import { ActionButton, formatDate, ListState, useLoaded } from './common.tsx';
import { SCOPES } from './tokens-tab.tsx';

type ConnectedApp = Schemas['ConnectedApp'];

const WORDS = new Map(SCOPES);

/** What the app may do, in the Access tokens tab's words, in the order that tab lists them. */
export function scopesInWords(scopes: ConnectedApp['scopes']): string[] {
  return SCOPES.filter(([scope]) => scopes.includes(scope as ConnectedApp['scopes'][number])).map(([scope]) => WORDS.get(scope)!);
}

export function ConnectedAppsTab() {
  const { studio } = useSession();
  const apps = useLoaded(() => allPages((cursor) => studio.client.GET('/me/connected-apps', { params: { query: { limit: 100, cursor } } })));
  const [error, setError] = useState<string>();
  const [status, setStatus] = useState('');
  return (
    <section aria-labelledby="connected-heading">
      <h2 id="connected-heading">Connected apps</h2>
      <p class="hint">The apps you let into your account. Each can do what you allowed and nothing more, until you revoke it.</p>
      <FormError id="connected-error" message={error} />
      <p class="visually-hidden" role="status">
        {status}
      </p>
      <ul id="connected-list" class="items" aria-labelledby="connected-heading">
        <ListState error={apps.error} loading={!apps.data} />
        {apps.data?.length === 0 ? <li class="empty">No app is connected. When you allow an app into your account, it shows here.</li> : null}
        {apps.data?.map((app) => {
          const id = `connected-${app.id}`;
          return (
            <li key={app.id} class="item connected-app">
              <div class="item-text" id={id}>
                <strong>{app.name}</strong>
                <span class="meta">
                  connected {formatDate(app.timeConnected)} · {app.lastUsedAt ? `last used ${formatTime(app.lastUsedAt)}` : 'never used'}
                </span>
                <ul class="scope-words" aria-label={`What ${app.name} may do`}>
                  {scopesInWords(app.scopes).map((words) => (
                    <li key={words}>{words}</li>
                  ))}
                </ul>
              </div>
              <div class="item-actions">
                <ActionButton
                  describedBy={id}
                  action={() => answer(studio.client.DELETE('/me/connected-apps/{appid}', { params: { path: { appid: app.id } } }))}
                  onRefused={setError}
                  onDone={async () => {
                    setStatus(`Revoked ${app.name}.`);
                    await apps.reload();
                  }}
                >
                  Revoke
                </ActionButton>
              </div>
            </li>
          );
        })}
      </ul>
    </section>
  );
}
