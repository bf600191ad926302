/**
 * /settings: Profile, Security, Access tokens, Connected apps, Developer
 * apps, Player defaults, Notifications, Webhooks, Payments, Storage, one
 * tab each (the ARIA tabs pattern: arrows move between tabs, Tab goes into
 * the panel). The tab is
 * in the address (?tab=security, or #security for a link written by
 * hand), so a link opens it and a reload keeps it. Only the chosen tab's
 * panel is drawn and reads the API.
 */
import type { ComponentType } from 'preact';
import { useMemo, useRef } from 'preact/hooks';
import { AccountApi } from '../../account/api.ts';
import { navigate, useLocation } from '../router.tsx';
import { useSession } from '../session.ts';
import { ConnectedAppsTab } from './connected-apps-tab.tsx';
import { DefaultsTab } from './defaults-tab.tsx';
import { DeveloperAppsTab } from './developer-apps-tab.tsx';
import { NotificationsTab } from './notifications-tab.tsx';
import { PaymentsTab } from './payments-tab.tsx';
import { ProfileTab } from './profile-tab.tsx';
import { SecurityTab } from './security-tab.tsx';
import { StorageTab } from './storage-tab.tsx';
import { TokensTab } from './tokens-tab.tsx';
import { WebhooksTab } from './webhooks-tab.tsx';
import './settings.css';

const TABS: Array<[string, string, ComponentType<{ account: AccountApi }>]> = [
  ['profile', 'Profile', ProfileTab],
  ['security', 'Security', SecurityTab],
  ['tokens', 'Access tokens', TokensTab],
  // What the person let in sits by their own tokens; what they build, by the tokens too, before the rest.
  ['connected-apps', 'Connected apps', ConnectedAppsTab],
  ['developer-apps', 'Developer apps', DeveloperAppsTab],
  ['defaults', 'Player defaults', DefaultsTab],
  ['notifications', 'Notifications', NotificationsTab],
  ['webhooks', 'Webhooks', WebhooksTab],
  ['payments', 'Payments', PaymentsTab],
  ['storage', 'Storage', StorageTab],
];

/** The tab the address names (?tab=… first, then #…), else Profile. */
function tabOf(url: URL): string {
  const named = url.searchParams.get('tab') ?? url.hash.slice(1);
  return TABS.some(([id]) => id === named) ? named : 'profile';
}

export function SettingsPage() {
  const { studio } = useSession();
  const location = useLocation();
  const current = tabOf(location);
  const account = useMemo(() => new AccountApi(studio.apiBase), [studio]);
  const tabs = useRef<HTMLDivElement>(null);
  const label = TABS.find(([id]) => id === current)![1];
  document.title = `${label} · Settings · Audio Share`;

  const choose = (id: string, focus = false) => {
    // The address says the tab (replaced, not pushed: Back leaves the settings rather than walking through its tabs).
    navigate(`${studio.basePath}/settings?tab=${id}`, { replace: true });
    if (focus) tabs.current?.querySelector<HTMLButtonElement>(`#tab-${id}`)?.focus();
  };
  // WAI-ARIA tabs: Left/Right move between tabs (wrapping), Home/End to the first and last; the focused tab is chosen.
  const onKey = (event: KeyboardEvent) => {
    const index = TABS.findIndex(([id]) => id === current);
    const next = { ArrowRight: index + 1, ArrowLeft: index - 1, Home: 0, End: TABS.length - 1 }[event.key];
    if (next === undefined) return;
    event.preventDefault();
    choose(TABS[(next + TABS.length) % TABS.length][0], true);
  };

  return (
    <>
      <h1>Settings</h1>
      <div role="tablist" aria-label="Settings" class="settings-tabs" ref={tabs} onKeyDown={onKey}>
        {TABS.map(([id, name]) => (
          <button key={id} type="button" role="tab" id={`tab-${id}`} aria-selected={id === current} aria-controls={`panel-${id}`} tabIndex={id === current ? 0 : -1} onClick={() => choose(id)}>
            {name}
          </button>
        ))}
      </div>
      {TABS.map(([id, , Tab]) => (
        <div key={id} role="tabpanel" id={`panel-${id}`} aria-labelledby={`tab-${id}`} hidden={id !== current}>
          {id === current ? <Tab account={account} /> : null}
        </div>
      ))}
    </>
  );
}
