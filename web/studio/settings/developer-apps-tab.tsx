/**
 * Settings, Developer apps: the apps (OAuth clients) this account
 * registered, each with its client id, type and redirect URIs, deleted here
 * after a confirmation; a new one registered with a name, its redirect URIs
 * one per line and its type. A confidential app's secret is shown once, in
 * a field to copy (GET /apps never answers it again).
 */
import { useRef, useState } from 'preact/hooks';
import { allPages, answer, type Schemas } from '../api.ts';
import { useSession } from '../session.ts';
import { ConfirmDelete, FormError } from '../ui.tsx';
import { checkForm, FocusedHeading, formatDate, ListState, useLoaded } from './common.tsx';

type App = Schemas['App'];
type AppType = Schemas['AppType'];

const TYPES: Array<[AppType, string, string]> = [
  ['public', 'Public', 'A desktop or mobile app, a plug-in or a page in a browser: it cannot keep a secret, and proves itself with PKCE alone.'],
  ['confidential', 'Confidential', 'An app with a server of its own, which keeps a secret and sends it with each token request.'],
];

/** The spec's bound on redirectUris (schemas/apps.yaml, CreateAppRequest: maxItems 10). */
const MAX_REDIRECT_URIS = 10;

/** The redirect URIs typed one per line: blank lines and the spaces around each left out, each one once. */
export function redirectUrisOf(text: string): string[] {
  return [...new Set(text.split(/\r?\n/).map((line) => line.trim()).filter(Boolean))];
}

/** What is wrong with the redirect URIs as typed, said as the person can fix it; undefined when nothing is. */
function redirectUriProblem(uris: string[]): string | undefined {
  if (uris.length === 0) return 'Type at least one redirect URI: where the app is sent back to after the person answers.';
  if (uris.length > MAX_REDIRECT_URIS) return `An app has at most ${MAX_REDIRECT_URIS} redirect URIs (these are ${uris.length}).`;
  for (const uri of uris) {
    if (!URL.canParse(uri)) return `“${uri}” is not a whole URL: write it as the app sends it, for example https://app.example.com/callback.`;
  }
  return undefined;
}

function AppSecret({ app }: { app: App & { secret: string } }) {
  const [copied, setCopied] = useState('');
  const field = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(app.secret);
      setCopied('Copied.');
    } catch {
      field.current?.select();
      setCopied('Select the secret and copy it.');
    }
  };
  return (
    <section class="secret" aria-labelledby="app-secret-heading">
      <FocusedHeading id="app-secret-heading">{`The secret of ${app.name}`}</FocusedHeading>
      <p class="warning">
        Copy it now and keep it on the app’s server: it is shown this once, and never again. Anyone who has it can act as this app. If it is lost, delete the app and
        register it again.
      </p>
      <div class="secret-row">
        <input ref={field} id="app-secret-value" type="text" readOnly aria-label="App secret" spellcheck={false} autoComplete="off" value={app.secret} />
        <button type="button" class="secondary" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status">{copied}</p>
    </section>
  );
}

function DeleteAppDialog({ app, onClose }: { app: App | null; onClose: (deleted: boolean) => void }) {
  const { studio } = useSession();
  return (
    <ConfirmDelete title="Delete app" open={!!app} errorId="delete-app-error" remove={() => answer(studio.client.DELETE('/apps/{appid}', { params: { path: { appid: app!.id } } }))} onClose={onClose}>
      <p>
        Delete <strong>{app?.name}</strong>? Everyone who let it in loses it at once: its access and refresh tokens stop working, and it can no longer ask anyone.
      </p>
    </ConfirmDelete>
  );
}

export function DeveloperAppsTab() {
  const { studio } = useSession();
  const apps = useLoaded(() => allPages((cursor) => studio.client.GET('/apps', { params: { query: { limit: 100, cursor } } })));
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [made, setMade] = useState<Schemas['AppWithSecret']>();
  const [deleting, setDeleting] = useState<App | null>(null);
  const [status, setStatus] = useState('');
  const register = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const invalid = checkForm(form);
    if (invalid) return setError(invalid);
    const data = new FormData(form);
    const redirectUris = redirectUrisOf(String(data.get('redirect-uris') ?? ''));
    const textarea = form.querySelector<HTMLTextAreaElement>('#app-redirect-uris')!;
    const problem = redirectUriProblem(redirectUris);
    if (problem) textarea.setAttribute('aria-invalid', 'true');
    else textarea.removeAttribute('aria-invalid');
    if (problem) {
      textarea.focus();
      return setError(problem);
    }
    setError(undefined);
    setBusy(true);
    const answered = await answer(studio.client.POST('/apps', { body: { name: String(data.get('app-name')).trim(), redirectUris, type: data.get('app-type') as AppType } }));
    setBusy(false);
    if (!answered.ok) return setError(answered.refusal.detail);
    form.reset();
    setStatus('');
    // Shown once: a confidential app's secret stays here until the tab is left, and the API never answers it again.
    setMade(answered.data);
    await apps.reload();
  };
  return (
    <>
      <section aria-labelledby="apps-heading">
        <h2 id="apps-heading">Developer apps</h2>
        <p class="hint">
          Apps you build that people can let into their accounts with OAuth 2.1 (the authorization code grant with PKCE). Send them to <code>/oauth/authorize</code>{' '}
          with the app’s client id.
        </p>
        <p class="visually-hidden" role="status">
          {status}
        </p>
        <ul id="app-list" class="items" aria-labelledby="apps-heading">
          <ListState error={apps.error} loading={!apps.data} />
          {apps.data?.length === 0 ? <li class="empty">No app yet.</li> : null}
          {apps.data?.map((app) => {
            const id = `app-${app.id}`;
            return (
              <li key={app.id} class="item app">
                <div class="item-text" id={id}>
                  <strong>{app.name}</strong>
                  <span class="meta">
                    {app.type === 'public' ? 'Public (PKCE only)' : 'Confidential (with a secret)'} · registered {formatDate(app.timeCreated)}
                  </span>
                  <span class="meta">
                    Client id <code>{app.id}</code>
                  </span>
                  <ul class="redirect-uris" aria-label={`Redirect URIs of ${app.name}`}>
                    {app.redirectUris.map((uri) => (
                      <li key={uri}>
                        <code>{uri}</code>
                      </li>
                    ))}
                  </ul>
                </div>
                <div class="item-actions">
                  <button type="button" class="secondary small" aria-describedby={id} onClick={() => setDeleting(app)}>
                    Delete
                  </button>
                </div>
              </li>
            );
          })}
        </ul>
      </section>
      <section aria-labelledby="new-app-heading">
        <h2 id="new-app-heading">Register an app</h2>
        <form id="app-form" class="app-form" noValidate onSubmit={register} aria-busy={busy ? 'true' : 'false'}>
          <div class="field">
            <label for="app-name">App name</label>
            <input id="app-name" name="app-name" type="text" autoComplete="off" required maxLength={100} aria-describedby="app-name-hint" />
            <p class="hint" id="app-name-hint">
              People see it when the app asks them: “Allow <em>name</em> to …”.
            </p>
          </div>
          <div class="field">
            <label for="app-redirect-uris">Redirect URIs</label>
            <textarea id="app-redirect-uris" name="redirect-uris" rows={3} spellcheck={false} autoComplete="off" aria-describedby="app-redirect-uris-hint" />
            <p class="hint" id="app-redirect-uris-hint">
              One per line, up to {MAX_REDIRECT_URIS}, matched exactly. <code>https</code>, or <code>http</code> on 127.0.0.1 or localhost (any port) for an app on the
              person’s computer.
            </p>
          </div>
          <div role="radiogroup" aria-labelledby="app-type-label" class="group">
            <p id="app-type-label" class="group-label">
              Type
            </p>
            {TYPES.map(([type, name, what]) => (
              <div key={type} class="option">
                <label class="check">
                  <input type="radio" name="app-type" value={type} defaultChecked={type === 'public'} aria-describedby={`app-type-${type}-hint`} /> {name}
                </label>
                <p class="hint" id={`app-type-${type}-hint`}>
                  {what}
                </p>
              </div>
            ))}
          </div>
          <FormError id="app-form-error" message={error} />
          <div class="actions">
            <button type="submit" disabled={busy}>
              Register app
            </button>
          </div>
        </form>
        {made?.secret ? <AppSecret key={made.id} app={{ ...made, secret: made.secret }} /> : null}
        {made && !made.secret ? (
          <section key={made.id} class="secret" aria-labelledby="app-made-heading">
            <FocusedHeading id="app-made-heading">{`${made.name} is registered`}</FocusedHeading>
            <p>
              Its client id is <code>{made.id}</code>. A public app has no secret: it proves itself with PKCE.
            </p>
          </section>
        ) : null}
      </section>
      <DeleteAppDialog
        app={deleting}
        onClose={async (deleted) => {
          const gone = deleting;
          setDeleting(null);
          if (!deleted || !gone) return;
          if (made?.id === gone.id) setMade(undefined);
          setStatus(`Deleted ${gone.name}.`);
          await apps.reload();
        }}
      />
    </>
  );
}
