/**
 * The pages a player shows when it does not open: each says why, and what
 * the listener can do about it. `data-lock` on the page's root names the
 * state for people reading the markup and for the tests.
 */
import type { PlayerApi, PlayerView, Refusal } from './api.ts';
import { formatTime, h, price, replaceChildren } from './dom.ts';

export type Lock = 'paywall' | 'password' | 'expired' | 'collaborators' | 'not-found';

function lockedPage(root: HTMLElement, lock: Lock, title: string, ...body: Array<Node | null>): void {
  root.dataset.state = 'locked';
  root.dataset.lock = lock;
  document.title = title;
  replaceChildren(root, h('section', { class: 'locked' }, h('h1', {}, title), ...body));
}

/** The lock a refusal of the view (or of a session) stands for; undefined when it is no lock but a failure. */
export function lockOf(refusal: Refusal): Lock | undefined {
  if (refusal.status === 404) return 'not-found';
  if (refusal.status === 410) return 'expired';
  if (refusal.status === 401 && refusal.lock === 'password') return 'password';
  if (refusal.status === 401 && refusal.lock === 'collaborators') return 'collaborators';
  if (refusal.type?.endsWith('/invite-invalid')) return 'collaborators';
  return undefined;
}

export function showRefusal(
  root: HTMLElement,
  api: PlayerApi,
  refusal: Refusal,
  open: (view: PlayerView) => void,
  embed?: { pageUrl: string },
): void {
  const lock = lockOf(refusal);
  const detail = h('p', {}, refusal.detail);
  // The embed page takes no password: a form in a frame on another site is how phishing and clickjacking work.
  if (embed && lock === 'password') {
    lockedPage(root, lock, 'This player has a password', h('p', {}, h('a', { href: embed.pageUrl, target: '_blank', rel: 'noopener' }, 'Open the player to enter it')));
    return;
  }
  switch (lock) {
    case 'not-found':
      lockedPage(root, lock, 'Player not found', h('p', {}, 'This link does not lead to a player. Check that it was copied whole, or ask whoever sent it.'));
      return;
    case 'expired':
      lockedPage(root, lock, 'This link has expired', detail);
      return;
    case 'collaborators':
      lockedPage(
        root,
        lock,
        'For invited collaborators',
        detail,
        h('p', {}, 'Open this player from the invite link its owner sent you. Each link works once, in one browser; ask the owner for a new one if yours was used.'),
      );
      return;
    case 'password':
      passwordPage(root, api, open);
      return;
    default:
      root.dataset.state = 'error';
      delete root.dataset.lock;
      replaceChildren(root, h('section', { class: 'locked' }, h('h1', {}, 'The player could not load'), h('p', { role: 'alert' }, refusal.detail)));
  }
}

function passwordPage(root: HTMLElement, api: PlayerApi, open: (view: PlayerView) => void): void {
  const input = h('input', { type: 'password', id: 'player-password', autocomplete: 'current-password', required: true });
  const alert = h('p', { class: 'alert', role: 'alert' });
  const submit = h('button', { type: 'submit' }, 'Open');
  const form = h('form', { class: 'password-form' }, h('label', { for: 'player-password' }, 'Password'), input, submit, alert);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!input.value) return void (alert.textContent = 'Type the password you were given.');
    submit.disabled = true;
    const answer = await api.openSession({ password: input.value });
    submit.disabled = false;
    if (answer.ok) {
      open(answer.data);
      return;
    }
    const retry = answer.refusal.retryAfter ? ` Try again in ${answer.refusal.retryAfter} s.` : '';
    alert.textContent = answer.refusal.detail + retry;
    input.select();
  });
  // The heading says it has a password; the server's refusal says the same, so the paragraph says what to do instead.
  lockedPage(root, 'password', 'This player has a password', h('p', {}, 'Type the password its owner gave you to listen.'), form);
  input.focus();
}

/**
 * The way to pay: a button that asks the API for a payment page and goes
 * there (a top-level navigation: the provider's page refuses frames). In an
 * embed, a link to the full page instead, which opens in its own tab.
 */
export function payButton(api: PlayerApi, paywall: NonNullable<PlayerView['paywall']>, embed?: { pageUrl: string }): HTMLElement {
  const label = `Buy ${paywall.fulfillment === 'allow-download' ? 'downloads' : 'access'} for ${price(paywall.price)}`;
  if (embed) return h('p', {}, h('a', { href: embed.pageUrl, target: '_blank', rel: 'noopener' }, `${label} on the player page`));
  const alert = h('p', { class: 'alert', role: 'alert' });
  const button = h('button', { type: 'button', class: 'pay' }, label);
  button.addEventListener('click', async () => {
    button.disabled = true;
    alert.textContent = '';
    const answer = await api.checkout();
    if (answer.ok) {
      window.location.assign(answer.data.url);
      return;
    }
    button.disabled = false;
    const retry = answer.refusal.retryAfter ? ` Try again in ${answer.refusal.retryAfter} s.` : '';
    alert.textContent = answer.refusal.detail + retry;
  });
  return h('div', { class: 'pay-box' }, button, alert);
}

/** An `allow-access` paywall not paid for this listener: what the player holds, and the button to buy it. */
export function showPaywall(root: HTMLElement, view: PlayerView, api: PlayerApi, embed?: { pageUrl: string }): void {
  const paywall = view.paywall!;
  const tracks = h(
    'ol',
    { class: 'tracks locked-tracks' },
    ...view.tracks.map((track) => {
      const duration = track.versions[0].duration;
      return h('li', { class: 'track', dataset: { trackId: track.id } }, h('span', {}, track.name), duration !== undefined ? h('span', { class: 'subtitle' }, formatTime(duration)) : null);
    }),
  );
  lockedPage(
    root,
    'paywall',
    view.name,
    view.projectName ? h('p', { class: 'project' }, view.projectName) : null,
    h('p', {}, `This player opens once it is bought: ${price(paywall.price)}.`, paywall.recipient === 'everyone' ? ' One purchase opens it for everyone with the link.' : ''),
    payButton(api, paywall, embed),
    tracks,
  );
}
