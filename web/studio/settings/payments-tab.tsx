/**
 * Settings, Payments: the Stripe account that listeners pay a paywall
 * into (GET/POST/DELETE /me/payment-provider). "Connect Stripe" makes (or
 * reuses) an account at Stripe and opens its onboarding; an account made
 * elsewhere is recorded by its id. A server that takes no payments says so
 * in its refusal, shown as it is.
 */
import { useState } from 'preact/hooks';
import { answer, type Schemas } from '../api.ts';
import { useSession } from '../session.ts';
import { FormError, formatTime } from '../ui.tsx';
import { ActionButton, useLoaded } from './common.tsx';

type Provider = Schemas['PaymentProvider'];

function Connected({ provider, onChange }: { provider: Provider; onChange: (next: Provider) => void }) {
  const { studio } = useSession();
  const [error, setError] = useState<string>();
  const ready = provider.chargesEnabled === true;
  return (
    <>
      <p id="payment-state">
        Stripe account <code>{provider.accountId}</code> connected
        {provider.timeConnected ? ` on ${formatTime(provider.timeConnected)}` : ''}.{' '}
        {provider.chargesEnabled === undefined ? 'Stripe could not be asked whether it takes payments yet.' : ready ? 'It takes payments.' : 'It does not take payments yet: finish Stripe’s onboarding.'}
      </p>
      <FormError id="payment-error" message={error} />
      <div class="actions">
        <ActionButton
          class="secondary"
          action={async () => {
            const done = await answer(studio.client.DELETE('/me/payment-provider'));
            if (done.ok) onChange(done.data);
            return done;
          }}
          onRefused={setError}
        >
          Disconnect
        </ActionButton>
      </div>
    </>
  );
}

function Connect({ onChange }: { onChange: (next: Provider) => void }) {
  const { studio } = useSession();
  const [error, setError] = useState<string>();
  const [onboarding, setOnboarding] = useState<string>();
  const [busy, setBusy] = useState(false);
  const connect = async (accountId?: string) => {
    setBusy(true);
    setError(undefined);
    const made = await answer(studio.client.POST('/me/payment-provider', { body: { provider: 'stripe', ...(accountId ? { accountId } : {}) } }));
    setBusy(false);
    if (!made.ok) return setError(made.refusal.detail);
    // Stripe's own page, in this tab: it sends the person back when done. It works once, for a few minutes.
    if (made.data.onboardingUrl) return setOnboarding(made.data.onboardingUrl);
    onChange(made.data);
  };
  const byId = (event: Event) => {
    event.preventDefault();
    const accountId = String(new FormData(event.currentTarget as HTMLFormElement).get('accountId') ?? '').trim();
    if (!/^acct_[A-Za-z0-9]{8,64}$/.test(accountId)) return setError('A Stripe account id starts with acct_ and has 8 to 64 letters and digits after it.');
    void connect(accountId);
  };
  return (
    <>
      <p id="payment-state">No payment provider is connected: players cannot carry a paywall.</p>
      <div class="actions">
        <button type="button" disabled={busy} onClick={() => connect()}>
          Connect Stripe
        </button>
      </div>
      {onboarding ? (
        <p class="notice">
          Your Stripe account is made. <a href={onboarding}>Continue to Stripe</a> to give it what it needs to pay you out.
        </p>
      ) : null}
      <form class="inline" noValidate onSubmit={byId}>
        <div class="field">
          <label for="stripe-account">Stripe account id</label>
          <input id="stripe-account" name="accountId" type="text" autoComplete="off" spellcheck={false} placeholder="acct_…" aria-describedby="stripe-account-hint" />
          <p class="hint" id="stripe-account-hint">
            Or connect a Stripe account you have already.
          </p>
        </div>
        <button type="submit" class="secondary" disabled={busy}>
          Connect account
        </button>
      </form>
      <FormError id="payment-error" message={error} />
    </>
  );
}

export function PaymentsTab() {
  const { studio } = useSession();
  const provider = useLoaded(() => answer(studio.client.GET('/me/payment-provider')));
  const [current, setCurrent] = useState<Provider>();
  const shown = current ?? provider.data;
  return (
    <section aria-labelledby="payments-heading">
      <h2 id="payments-heading">Payments</h2>
      <p class="hint">A player’s paywall is paid into your Stripe account.</p>
      <FormError id="payments-load-error" message={provider.error} />
      {!shown ? provider.error ? null : <p class="meta">Loading…</p> : shown.connected ? <Connected provider={shown} onChange={setCurrent} /> : <Connect onChange={setCurrent} />}
    </section>
  );
}
