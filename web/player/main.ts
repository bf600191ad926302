/**
 * The player page's entry point. The server sends a shell (server/pages/page-shell.ts)
 * whose root element names the player and the API; everything else comes
 * from the API: an invite link's token opens a session first, then the view
 * decides between the player and a locked page.
 */
import './player.css';
import { PlayerApi, type Answer, type PlayerView } from './api.ts';
import { showPaywall, showRefusal } from './locked.ts';
import { PlayerApp, type PageConfig } from './player-app.ts';

const root = document.getElementById('app')!;
const config: PageConfig = {
  playerId: root.dataset.playerId!,
  apiBase: new URL(root.dataset.apiBase!, window.location.href).href,
  embed: root.dataset.embed === 'true',
  pageUrl: root.dataset.pageUrl ?? window.location.href,
};
const api = new PlayerApi(config.apiBase, config.playerId);

function open(view: PlayerView): void {
  if (view.access.state === 'locked' && view.paywall?.fulfillment === 'allow-access') showPaywall(root, view, api, config.embed ? { pageUrl: config.pageUrl } : undefined);
  else new PlayerApp(root, api, config, view).start();
}

async function boot(): Promise<void> {
  const url = new URL(window.location.href);
  const invite = url.searchParams.get('invite');
  const checkout = url.searchParams.get('checkout');
  let answer: Answer<PlayerView>;
  if (invite) {
    // The token works once: it leaves the address bar (and so the history and any bookmark) before it is spent.
    url.searchParams.delete('invite');
    window.history.replaceState(null, '', url.pathname + url.search + url.hash);
    answer = await api.openSession({ invite });
    // A spent link in a browser that already holds a session (a reload, a second click in the mail) still opens.
    if (!answer.ok && answer.refusal.status === 403) {
      const held = await api.view();
      if (held.ok) answer = held;
    }
  } else if (checkout) {
    // Back from the payment page: the purchase is claimed for this browser's session (the server asks the provider), then the address is cleaned.
    url.searchParams.delete('checkout');
    window.history.replaceState(null, '', url.pathname + url.search + url.hash);
    answer = await api.openSession({ checkout });
    if (!answer.ok) answer = await api.view();
  } else {
    answer = await api.view();
  }
  if (answer.ok) open(answer.data);
  else showRefusal(root, api, answer.refusal, open, config.embed ? { pageUrl: config.pageUrl } : undefined);
}

void boot();
