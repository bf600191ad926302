/**
 * The studio's settings (/settings) and administration (/admin) in
 * headless Chromium against a real server, on SQLite and PostgreSQL: each
 * tab saves something through its controls and the API shows it (Profile's
 * name, Player defaults, an access token made and revoked, a webhook made,
 * edited, its delivery sent again and deleted, a Stripe account connected
 * by its id and disconnected); the tab is in the address; the tabs follow
 * the arrow keys. /admin: an administrator disables someone, sets a quota
 * and invites (the link shown, as this server sends no mail); anyone else
 * is told it is for administrators only. Screenshots at 1280 and 360 px
 * in /tmp/shots-studio/, axe-core clean, no CSP violation, no console
 * error, nothing from another origin.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { backends } from '../server/testing/databases.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { checkLayout, studioPage } from './testing/studio-browser.ts';

const BROWSER_TEST_MS = 120_000;

describe.each(backends)('the studio settings and administration (%s)', (backend) => {
  // Webhooks to a loopback address, as a self-hosted operator may allow.
  const t = useTestServer(backend, { WEBHOOK_ALLOW_PRIVATE: 'true' });
  const chromium = useBrowser();
  const shots = backend === 'sqlite';

  it(
    'Profile, Player defaults, Access tokens and Notifications save through their controls, and the API shows it; Storage shows the use; the tab is in the address',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, `settings-${backend}@example.com`);
      const { page } = studio;
      const api = studio.signedIn.api;
      try {
        await studio.open('/settings');
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Settings');
        const tab = (name: string) => page.getByRole('tab', { name, exact: true });
        expect(await tab('Profile').getAttribute('aria-selected')).toBe('true');
        expect(await page.locator('#email-state').textContent()).toBe(`settings-${backend}@example.com, verified.`);
        if (shots) await checkLayout(page, 'settings-profile');
        // At 360 px every tab is in sight, none hidden off the edge of a row that scrolls.
        await page.setViewportSize({ width: 360, height: 800 });
        const tabBoxes = await page.getByRole('tab').evaluateAll((tabs) => tabs.map((tab) => tab.getBoundingClientRect()).map(({ left, right }) => ({ left, right })));
        expect(tabBoxes).toHaveLength(10);
        for (const { left, right } of tabBoxes) expect(left >= 0 && right <= 360, `a tab spans ${left}–${right} px`).toBe(true);
        await page.setViewportSize({ width: 1280, height: 800 });

        // Profile: the name, shown in the bar at once and by GET /me.
        await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Sam Rivera');
        await page.getByRole('button', { name: 'Save', exact: true }).click();
        await expect.poll(() => page.locator('header .bar-user').textContent()).toBe('Sam Rivera');
        expect((await api.GET('/me')).data?.name).toBe('Sam Rivera');

        // Uploads: versions stack themselves until the account turns it off, saved at once.
        const autoStack = page.getByRole('checkbox', { name: 'Stack versions automatically', exact: true });
        expect(await autoStack.isChecked()).toBe(true);
        await autoStack.uncheck();
        await expect.poll(async () => (await api.GET('/me')).data?.autoStack).toBe(false);
        await autoStack.check();
        await expect.poll(async () => (await api.GET('/me')).data?.autoStack).toBe(true);

        // The tabs follow the arrow keys, and the address follows the tab.
        await tab('Profile').focus();
        await page.keyboard.press('ArrowRight');
        await expect.poll(() => tab('Security').getAttribute('aria-selected')).toBe('true');
        expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Security');
        expect(new URL(page.url()).search).toBe('?tab=security');
        await page.getByRole('list', { name: 'Security events' }).getByText('Signed in').first().waitFor();
        await page.getByRole('list', { name: 'Sessions' }).getByText('This device').waitFor();
        if (shots) await checkLayout(page, 'settings-security');

        // Player defaults: what a new player gets, stored as preferences.
        await studio.open('/settings?tab=defaults');
        expect(await tab('Player defaults').getAttribute('aria-selected')).toBe('true');
        const downloads = page.getByRole('checkbox', { name: 'Downloads', exact: true });
        expect(await downloads.isChecked()).toBe(true);
        expect(await page.getByRole('checkbox', { name: 'Download notice', exact: true }).isChecked()).toBe(true);
        await downloads.uncheck();
        await page.getByRole('radio', { name: 'Only people I invite', exact: true }).check();
        await page.getByRole('combobox', { name: 'Quality', exact: true }).selectOption('lossless');
        if (shots) await checkLayout(page, 'settings-defaults');
        await page.getByRole('button', { name: 'Save defaults', exact: true }).click();
        await page.getByText('Saved. New players start with these.').waitFor();
        const preferences = (await api.GET('/me/preferences')).data!;
        expect(preferences).toMatchObject({ public: false, options: { downloads: false, quality: 'lossless' } });
        // Untouched options keep following the server's defaults: nothing stored for them.
        expect(preferences.options.comments).toBeUndefined();
        // A player made now gets them.
        const project = (await api.POST('/projects', { body: { name: 'Defaults check' } })).data!;
        const player = (await api.POST('/players', { body: { name: 'Defaults check', projectid: project.id } })).data!;
        expect(player).toMatchObject({ public: false, options: { downloads: false, quality: 'lossless', comments: true } });
        await page.reload();
        await page.locator('#studio[data-state="ready"]').waitFor();
        await expect.poll(() => page.getByRole('checkbox', { name: 'Downloads', exact: true }).isChecked()).toBe(false);

        // Access tokens: made with a scope, its secret shown once and working; then revoked.
        await tab('Access tokens').click();
        await page.getByRole('textbox', { name: 'Token name', exact: true }).fill('Backup job');
        await page.getByRole('checkbox', { name: /projects:read/ }).check();
        await page.getByRole('button', { name: 'Create token', exact: true }).click();
        const secret = page.getByRole('textbox', { name: 'New token', exact: true });
        await expect.poll(() => secret.inputValue()).toMatch(/\S{20,}/);
        expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Your new token');
        const bearer = { Authorization: `Bearer ${await secret.inputValue()}` };
        expect((await fetch(`${t.server.apiUrl}/projects`, { headers: bearer })).status).toBe(200);
        const tokens = page.getByRole('list', { name: 'API tokens' });
        await tokens.getByText('projects:read · never expires').waitFor();
        if (shots) await checkLayout(page, 'settings-tokens');
        await tokens.getByRole('listitem').filter({ hasText: 'Backup job' }).getByRole('button', { name: 'Revoke' }).click();
        await tokens.getByText('No token yet.').waitFor();
        expect((await fetch(`${t.server.apiUrl}/projects`, { headers: bearer })).status).toBe(401);

        // Notifications: mailed once a day instead of at once.
        await tab('Notifications').click();
        const atOnce = page.getByRole('radio', { name: 'At once', exact: true });
        await expect.poll(() => atOnce.isChecked()).toBe(true);
        await page.getByRole('radio', { name: 'Daily digest', exact: true }).check();
        if (shots) await checkLayout(page, 'settings-notifications');
        await page.getByRole('button', { name: 'Save', exact: true }).click();
        await page.getByText('Saved.', { exact: true }).waitFor();
        expect((await api.GET('/me/notification-settings')).data).toEqual({ mail: 'digest' });

        // Storage: what the account's projects keep, as GET /me/storage counts it.
        await tab('Storage').click();
        const used = (await api.GET('/me/storage')).data!;
        await page.locator('#storage-state').waitFor();
        expect(await page.locator('#storage-state').textContent()).toContain(used.quota === null ? 'no quota' : 'used');
        if (shots) await checkLayout(page, 'settings-storage');

        expect(await studio.problems()).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'Webhooks: made (its secret shown once), edited, its delivery sent again with Redeliver, deleted; Payments: a Stripe account connected by its id, then disconnected',
    async () => {
      // A receiver on loopback that takes every delivery (200) and counts them.
      const received: string[] = [];
      const receiver = createServer((request, response) => {
        received.push(String(request.headers['webhook-id']));
        request.resume();
        request.on('end', () => response.end('ok'));
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      const studio = await studioPage(chromium.browser, t.server, `hooks-${backend}@example.com`);
      const { page } = studio;
      const api = studio.signedIn.api;
      try {
        await studio.open('/settings#webhooks');
        expect(await page.getByRole('tab', { name: 'Webhooks', exact: true }).getAttribute('aria-selected')).toBe('true');
        const hooks = page.getByRole('list', { name: 'Webhooks' });
        await hooks.getByText('No webhook yet.').waitFor();
        // Nothing chosen: said, nothing made.
        await page.getByRole('textbox', { name: 'URL', exact: true }).fill(hookUrl);
        await page.getByRole('button', { name: 'Create webhook', exact: true }).click();
        await page.getByText('Choose at least one event to deliver.').waitFor();
        await page.getByRole('textbox', { name: 'Label', exact: true }).fill('Mastering queue');
        await page.getByRole('checkbox', { name: /project\.created/ }).check();
        await page.getByRole('button', { name: 'Create webhook', exact: true }).click();
        await expect.poll(() => page.getByRole('textbox', { name: 'Signing secret' }).inputValue()).toMatch(/^whsec_/);
        const [webhook] = (await api.GET('/webhooks')).data!;
        expect(webhook).toMatchObject({ label: 'Mastering queue', url: hookUrl, events: ['project.created'], enabled: true });
        if (shots) await checkLayout(page, 'settings-webhooks');

        // Edited: a new label, and turned off then on again is the same form.
        const row = hooks.getByRole('listitem').filter({ hasText: 'Mastering queue' }).first();
        await row.getByRole('button', { name: 'Edit' }).click();
        await page.getByRole('form', { name: 'Edit Mastering queue' }).getByRole('textbox', { name: 'Label' }).fill('Mastering (staging)');
        await page.getByRole('form', { name: 'Edit Mastering queue' }).getByRole('button', { name: 'Save' }).click();
        await hooks.getByText('Mastering (staging)').waitFor();
        expect((await api.GET('/webhooks/{webhookid}', { params: { path: { webhookid: webhook.id } } })).data?.label).toBe('Mastering (staging)');

        // An event to deliver: a project made. Its delivery is in the log, and Redeliver sends it again.
        await api.POST('/projects', { body: { name: 'Webhook check' } });
        const deliveries = async () => (await api.GET('/webhooks/{webhookid}/deliveries', { params: { path: { webhookid: webhook.id } } })).data!;
        await expect.poll(async () => (await deliveries()).map((delivery) => delivery.status), { timeout: 20_000 }).toEqual(['succeeded']);
        expect(received).toHaveLength(1);
        const renamed = hooks.getByRole('listitem').filter({ hasText: 'Mastering (staging)' }).first();
        await renamed.getByRole('button', { name: 'Delivery log' }).click();
        const log = page.getByRole('list', { name: 'Deliveries' });
        await log.getByText('project.created').waitFor();
        if (shots) await checkLayout(page, 'settings-webhook-log');
        const redelivered = page.waitForResponse((response) => /\/deliveries\/[^/]+\/redeliver$/.test(new URL(response.url()).pathname));
        await log.getByRole('button', { name: 'Redeliver' }).click();
        expect((await redelivered).status()).toBe(200);
        // Sent again, with the same webhook-id.
        await expect.poll(() => received.length, { timeout: 20_000 }).toBe(2);
        expect(received[1]).toBe(received[0]);

        await renamed.getByRole('button', { name: 'Delete' }).click();
        await hooks.getByText('No webhook yet.').waitFor();
        expect((await api.GET('/webhooks')).data).toEqual([]);

        // Payments: an account of the musician's at Stripe, recorded by its id.
        await page.getByRole('tab', { name: 'Payments', exact: true }).click();
        await page.getByText('No payment provider is connected').waitFor();
        await page.getByRole('textbox', { name: 'Stripe account id', exact: true }).fill('not an id');
        await page.getByRole('button', { name: 'Connect account', exact: true }).click();
        await page.getByText('A Stripe account id starts with acct_').waitFor();
        await page.getByRole('textbox', { name: 'Stripe account id', exact: true }).fill('acct_1Q2w3E4r5T6y7U8i');
        await page.getByRole('button', { name: 'Connect account', exact: true }).click();
        await page.getByText('acct_1Q2w3E4r5T6y7U8i').waitFor();
        expect((await api.GET('/me/payment-provider')).data).toMatchObject({ connected: true, provider: 'stripe', accountId: 'acct_1Q2w3E4r5T6y7U8i' });
        if (shots) await checkLayout(page, 'settings-payments');
        await page.getByRole('button', { name: 'Disconnect', exact: true }).click();
        await page.getByText('No payment provider is connected').waitFor();
        expect((await api.GET('/me/payment-provider')).data).toMatchObject({ connected: false });

        expect(await studio.problems()).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
        await new Promise((resolve) => receiver.close(resolve));
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    '/admin: an administrator disables someone, sets their quota and invites (the link shown without mail); anyone else is told it is for administrators only',
    async () => {
      const adminEmail = `admin-${backend}@example.com`;
      const otherEmail = `member-${backend}@example.com`;
      await t.server.ctx.store.users.findOrCreate(adminEmail, Date.now());
      await t.server.ctx.store.db.execute('UPDATE users SET is_admin = 1 WHERE email = $1', [adminEmail]);
      const member = await studioPage(chromium.browser, t.server, otherEmail);
      const admin = await studioPage(chromium.browser, t.server, adminEmail);
      const memberId = (await t.server.ctx.store.users.findByEmail(otherEmail))!.id;
      try {
        // Not an administrator: no Admin in the bar, and the page says so.
        await member.open('/admin');
        await member.page.getByText('This page is for administrators only.').waitFor();
        expect(await member.page.getByRole('link', { name: 'Admin', exact: true }).count()).toBe(0);
        if (shots) await checkLayout(member.page, 'admin-refused');

        const { page } = admin;
        await admin.open('/');
        await page.getByRole('link', { name: 'Admin', exact: true }).click();
        await page.waitForURL(/\/admin$/);
        const people = page.getByRole('list', { name: 'People' });
        const row = people.getByRole('listitem').filter({ hasText: otherEmail });
        await row.waitFor();
        await people.getByRole('listitem').filter({ hasText: `${adminEmail} (you)` }).waitFor();
        if (shots) await checkLayout(page, 'admin');

        await row.getByRole('button', { name: 'Disable' }).click();
        await row.getByRole('button', { name: 'Enable' }).waitFor();
        expect(await row.textContent()).toContain('Disabled');
        const listed = async () => (await admin.signedIn.api.GET('/admin/users')).data!.find((person) => person.id === memberId)!;
        expect((await listed()).disabled).toBe(true);
        // Disabled: the member's session is over.
        expect((await member.signedIn.api.GET('/me')).response.status).toBe(401);

        await row.getByRole('button', { name: 'Set quota' }).click();
        await row.getByRole('textbox', { name: `Quota in GB for ${otherEmail}` }).fill('2.5');
        await row.getByRole('button', { name: 'Save quota' }).click();
        await row.getByText('of 2.5 GB used').waitFor();
        expect((await listed()).storageQuota).toBe(2_500_000_000);

        await row.getByRole('button', { name: 'Enable' }).click();
        await row.getByRole('button', { name: 'Disable' }).waitFor();
        expect((await listed()).disabled).toBe(false);

        // An invitation: no mail on this server, so the link is shown to hand over.
        await page.getByRole('textbox', { name: 'Email', exact: true }).fill('friend@example.com');
        await page.getByRole('checkbox', { name: 'Administrator', exact: true }).check();
        await page.getByRole('button', { name: 'Invite', exact: true }).click();
        const link = page.getByRole('textbox', { name: 'Invitation link', exact: true });
        await expect.poll(() => link.inputValue()).toContain('/signup?invite=');
        expect(await page.getByRole('heading', { name: 'Invitation for friend@example.com' }).count()).toBe(1);
        if (shots) await checkLayout(page, 'admin-invited');

        expect(await admin.problems()).toEqual([]);
        expect(admin.foreign).toEqual([]);
        expect(await member.problems()).toEqual([]);
      } finally {
        await admin.close();
        await member.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
