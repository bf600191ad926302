/**
 * Settings, Access tokens: each token with its scopes, expiry and last
 * use, revoked from here; a new one made with a name, scopes and an
 * optional expiry, its secret shown once in a field to copy (the API never
 * answers it again).
 */
import { useRef, useState } from 'preact/hooks';
import type { AccountApi, Token } from '../../account/api.ts';
import { FormError, formatTime } from '../ui.tsx';
import { ActionButton, checkForm, FocusedHeading, formatDate, ListState, useLoaded } from './common.tsx';

/** Each scope and what it lets a holder do, in a few words (the Connected apps tab says them too). */
export const SCOPES: Array<[string, string]> = [
  ['projects:read', 'Read projects and files'],
  ['projects:write', 'Change projects, files, uploads'],
  ['players:read', 'Read players'],
  ['players:write', 'Change players, collaborators, portals'],
  ['comments:read', 'Read comments'],
  ['comments:write', 'Write comments'],
  ['webhooks:read', 'Read webhooks'],
  ['webhooks:write', 'Change webhooks'],
  ['account:read', 'Read the account'],
  ['account:write', 'Change the account'],
];

/** A token made before scopes, or by the admin CLI, holds every one of them. */
const scopeText = (scopes: Token['scopes']) => (scopes.length >= SCOPES.length ? 'every scope' : scopes.join(', '));

/** yyyy-mm-dd of tomorrow here: the earliest expiry (a token that expires tonight is not worth making). */
function tomorrow(): string {
  const day = new Date(Date.now() + 86_400_000);
  return `${day.getFullYear()}-${String(day.getMonth() + 1).padStart(2, '0')}-${String(day.getDate()).padStart(2, '0')}`;
}

function NewSecret({ secret }: { secret: string }) {
  const [copied, setCopied] = useState('');
  const field = useRef<HTMLInputElement>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied('Copied.');
    } catch {
      field.current?.select();
      setCopied('Select the token and copy it.');
    }
  };
  return (
    <section id="token-secret" class="secret" aria-labelledby="token-secret-heading">
      <FocusedHeading id="token-secret-heading">Your new token</FocusedHeading>
      <p>Copy it now: it is shown this once, and never again.</p>
      <div class="secret-row">
        <input ref={field} id="token-secret-value" type="text" readOnly aria-label="New token" spellcheck={false} autoComplete="off" value={secret} />
        <button type="button" class="secondary" onClick={copy}>
          Copy
        </button>
      </div>
      <p role="status">{copied}</p>
    </section>
  );
}

export function TokensTab({ account }: { account: AccountApi }) {
  const tokens = useLoaded(() => account.listTokens());
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const [secret, setSecret] = useState<string>();
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const invalid = checkForm(form);
    if (invalid) return setError(invalid);
    const data = new FormData(form);
    const scopes = data.getAll('scope').map(String);
    if (scopes.length === 0) return setError('Choose at least one scope: what the token may do.');
    const expiry = String(data.get('token-expiry') ?? '');
    // The end of the chosen day, in this browser's time zone.
    const expiresAt = expiry ? new Date(`${expiry}T23:59:59.999`).getTime() : undefined;
    setError(undefined);
    setBusy(true);
    const made = await account.createToken({ name: String(data.get('token-name')).trim(), scopes, ...(expiresAt ? { expiresAt } : {}) });
    setBusy(false);
    if (!made.ok) return setError(made.refusal.detail);
    form.reset();
    // Shown once: the secret stays in this field until the tab is left, and the API never answers it again.
    setSecret(made.data.secret);
    await tokens.reload();
  };
  return (
    <>
      <section aria-labelledby="tokens-heading">
        <h2 id="tokens-heading">API tokens</h2>
        <p class="hint">A token lets a program use the API as you, with the scopes you give it and no more.</p>
        <ul id="token-list" class="items" aria-labelledby="tokens-heading">
          <ListState error={tokens.error} loading={!tokens.data} />
          {tokens.data?.length === 0 ? <li class="empty">No token yet.</li> : null}
          {tokens.data?.map((token) => {
            const id = `token-${token.id}`;
            const details = [scopeText(token.scopes), token.expiresAt ? `expires ${formatDate(token.expiresAt)}` : 'never expires', token.lastUsedAt ? `last used ${formatTime(token.lastUsedAt)}` : 'never used'].join(' · ');
            return (
              <li key={token.id} class="item">
                <div class="item-text" id={id}>
                  <strong>{token.name}</strong>
                  <span class="meta">{details}</span>
                </div>
                <div class="item-actions">
                  <ActionButton describedBy={id} action={() => account.revokeToken(token.id)} onRefused={setError} onDone={tokens.reload}>
                    Revoke
                  </ActionButton>
                </div>
              </li>
            );
          })}
        </ul>
      </section>
      <section aria-labelledby="new-token-heading">
        <h2 id="new-token-heading">New token</h2>
        <form id="token-form" noValidate onSubmit={submit} aria-busy={busy ? 'true' : 'false'}>
          <div class="field">
            <label for="token-name">Token name</label>
            <input id="token-name" name="token-name" type="text" autoComplete="off" required maxLength={100} />
          </div>
          <fieldset>
            <legend>Scopes</legend>
            {SCOPES.map(([scope, what]) => (
              <label key={scope} class="check">
                <input type="checkbox" name="scope" value={scope} /> <code>{scope}</code> <span>{what}</span>
              </label>
            ))}
          </fieldset>
          <div class="field">
            <label for="token-expiry">Expires on (optional)</label>
            <input id="token-expiry" name="token-expiry" type="date" min={tomorrow()} aria-describedby="token-expiry-hint" />
            <p class="hint" id="token-expiry-hint">
              Leave empty for a token that lasts until you revoke it.
            </p>
          </div>
          <FormError id="token-form-error" message={error} />
          <div class="actions">
            <button type="submit" disabled={busy}>
              Create token
            </button>
          </div>
        </form>
        {secret ? <NewSecret key={secret} secret={secret} /> : null}
      </section>
    </>
  );
}
