/**
 * The studio offers what the server says the account may do (the
 * `abilities` of Project and Player answers), not what it reads into a
 * role: in headless Chromium, on SQLite and PostgreSQL, an editor of
 * someone else's project gets its uploads, changes and Share, but no
 * paywall even with payments connected (setting one is the owner's alone);
 * a viewer gets none of the changes, only playing, opening and exporting
 * comments, and on /links no New link and no Edit. The spec's Roles rule:
 * "The owner of a project, and its collaborators with the admin or editor
 * role, can change the project, its boxes and its players. Collaborators
 * with the viewer role can only read." Screenshots at 1280 and 360 px in
 * /tmp/shots-studio/, axe-core clean, no CSP violation, no console error,
 * nothing from another origin.
 */
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { backends } from '../server/testing/databases.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { checkLayout, studioPage } from './testing/studio-browser.ts';
import { LISTENING_SERVER_ENV, connectPaymentProvider, createPlayer, makeSmallProject } from './testing/player-fixtures.ts';

const BROWSER_TEST_MS = 120_000;

const rowOf = (page: Page, name: string) => page.getByRole('list', { name: 'Files' }).getByRole('listitem').filter({ has: page.getByRole('checkbox', { name: `Select ${name}`, exact: true }) });

describe.each(backends)('what the studio offers by abilities (%s)', (backend) => {
  const t = useTestServer(backend, LISTENING_SERVER_ENV);
  const chromium = useBrowser();
  const EDITOR = `editor-${backend}@example.com`;
  const VIEWER = `viewer-${backend}@example.com`;

  it(
    'gives an editor the changes and Share but no paywall, and a viewer only what reads',
    async () => {
      const { projectid, track } = await makeSmallProject(t, 'Team Tapes');
      await connectPaymentProvider(t);
      const player = await createPlayer(t, { name: 'Team review', projectid, collaborators: [{ email: EDITOR, role: 'editor' }, { email: VIEWER, role: 'viewer' }] });
      const name = track.versions[0].name;
      // The editor's own account takes payments too: still no paywall, since the project's checkouts pay its owner.
      const { api: editorApi } = await t.as(EDITOR);
      expect((await editorApi.POST('/me/payment-provider', { body: { provider: 'stripe', accountId: 'acct_EditorOwn01' } })).error).toBeUndefined();

      const editor = await studioPage(chromium.browser, t.server, EDITOR);
      try {
        const { page } = editor;
        await editor.open(`/projects/${projectid}`);
        await page.getByRole('heading', { level: 1, name: 'Team Tapes' }).waitFor();
        await rowOf(page, name).waitFor();
        expect(await page.getByText('Shared with you · editor').count()).toBe(1);
        expect(await page.getByText('Upload files', { exact: true }).count()).toBe(1);
        expect(await page.getByRole('button', { name: 'New folder', exact: true }).count()).toBe(1);
        expect(await page.getByText('Add artwork', { exact: true }).count()).toBe(1);
        await rowOf(page, name).getByRole('button', { name: `Actions for ${name}`, exact: true }).click();
        for (const action of ['Rename', 'Move to…', 'Move to trash']) expect(await rowOf(page, name).getByRole('button', { name: action, exact: true }).count(), action).toBe(1);
        await page.keyboard.press('Escape');
        if (backend === 'sqlite') await checkLayout(page, 'abilities-project-editor');

        await page.getByRole('button', { name: 'Share', exact: true }).first().click();
        const dialog = page.getByRole('dialog', { name: 'Share' });
        await dialog.getByRole('textbox', { name: 'Player name', exact: true }).waitFor();
        expect(await dialog.getByRole('switch', { name: 'Paywall', exact: true }).count()).toBe(0);
        if (backend === 'sqlite') await checkLayout(page, 'abilities-share-editor');
        await dialog.getByRole('button', { name: 'Close', exact: true }).first().click();
        await dialog.waitFor({ state: 'hidden' });

        await editor.open('/links');
        await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
        expect(await page.getByRole('combobox', { name: 'Project', exact: true }).getByRole('option').allTextContents()).toEqual(['Team Tapes']);
        expect(await page.getByRole('button', { name: 'New link', exact: true }).count()).toBe(1);
        await editor.open(`/links/${player.id}`);
        await page.getByRole('heading', { level: 1, name: 'Team review' }).waitFor();
        expect(await page.getByRole('button', { name: 'Edit', exact: true }).count()).toBe(1);
        if (backend === 'sqlite') await checkLayout(page, 'abilities-link-editor');
        expect(await editor.problems()).toEqual([]);
        expect(editor.foreign).toEqual([]);
      } finally {
        await editor.close();
      }

      const viewer = await studioPage(chromium.browser, t.server, VIEWER);
      try {
        const { page } = viewer;
        await viewer.open(`/projects/${projectid}`);
        await page.getByRole('heading', { level: 1, name: 'Team Tapes' }).waitFor();
        await rowOf(page, name).waitFor();
        expect(await page.getByText('Shared with you · viewer').count()).toBe(1);
        expect(await page.getByText('You may only read this project.', { exact: false }).count()).toBe(1);
        for (const control of ['Upload files', 'Add artwork']) expect(await page.getByText(control, { exact: true }).count(), control).toBe(0);
        for (const button of ['Share', 'New folder']) expect(await page.getByRole('button', { name: button, exact: true }).count(), button).toBe(0);
        // Playing and exporting comments read; every change is gone from the row.
        expect(await rowOf(page, name).getByRole('button', { name: `Play ${name}`, exact: true }).count()).toBe(1);
        await rowOf(page, name).getByRole('button', { name: `Actions for ${name}`, exact: true }).click();
        await rowOf(page, name).getByText('Export comments', { exact: true }).waitFor();
        for (const action of ['Rename', 'Move to…', 'Move to trash']) expect(await rowOf(page, name).getByRole('button', { name: action, exact: true }).count(), action).toBe(0);
        if (backend === 'sqlite') await checkLayout(page, 'abilities-project-viewer');
        await page.keyboard.press('Escape');
        await page.getByRole('button', { name: /^Trash/ }).click();
        await page.getByText('The trash is empty.').waitFor();

        await viewer.open('/links');
        await page.getByRole('heading', { level: 1, name: 'Links' }).waitFor();
        await page.getByText('No links yet.').waitFor();
        expect(await page.getByRole('button', { name: 'New link', exact: true }).count()).toBe(0);
        if (backend === 'sqlite') await checkLayout(page, 'abilities-links-viewer');
        await viewer.open(`/links/${player.id}`);
        await page.getByRole('heading', { level: 1, name: 'Team review' }).waitFor();
        expect(await page.getByRole('button', { name: 'Edit', exact: true }).count()).toBe(0);
        if (backend === 'sqlite') await checkLayout(page, 'abilities-link-viewer');
        expect(await viewer.problems()).toEqual([]);
        expect(viewer.foreign).toEqual([]);
      } finally {
        await viewer.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
