/**
 * The studio's library (/) in headless Chromium against a real server, on
 * SQLite and PostgreSQL: the frame (bar, the account's name, Sign out), the
 * projects as links named by the project with their last change, search
 * ("/" focuses it), the Mine filter, and a new project made from the
 * dialog landing on its page; a library of 300 projects drawn a window at a
 * time, which search, Tab and scrolling reach whole. Screenshots at 1280 and 360 px in
 * /tmp/shots-studio/, axe-core clean, no CSP violation, no console error,
 * nothing from another origin.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../server/testing/databases.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { makeLibrary } from '../server/testing/studio-data.ts';
import { checkLayout, studioPage } from './testing/studio-browser.ts';

const BROWSER_TEST_MS = 90_000;

describe.each(backends)('the studio library (%s)', (backend) => {
  const t = useTestServer(backend);
  const chromium = useBrowser();

  it(
    'shows an empty library, then makes a project from New project and lands on its page',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, 'empty@example.com');
      const { page } = studio;
      try {
        await studio.open('/');
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Library');
        await page.getByText('No projects yet').waitFor();
        expect(await page.locator('header .bar-user').textContent()).toBe('empty@example.com');
        if (backend === 'sqlite') await checkLayout(page, 'library-empty');

        await page.getByRole('button', { name: 'New project', exact: true }).click();
        const dialog = page.getByRole('dialog', { name: 'New project' });
        await dialog.waitFor();
        // Nothing typed: said in the dialog, nothing made.
        await dialog.getByRole('button', { name: 'Create', exact: true }).click();
        await expect.poll(() => dialog.getByRole('alert').textContent()).toBe('Give the project a name.');
        if (backend === 'sqlite') await checkLayout(page, 'library-new-project');
        await dialog.getByRole('textbox', { name: 'Project name', exact: true }).fill('Spring EP');
        await dialog.getByRole('button', { name: 'Create', exact: true }).click();
        await page.waitForURL(/\/projects\/[^/]+$/);
        const projectid = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
        const { data: project } = await studio.signedIn.api.GET('/projects/{projectid}', { params: { path: { projectid } } });
        expect(project).toMatchObject({ name: 'Spring EP', role: 'owner' });

        expect(await studio.problems()).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'lists projects as links named by the project, newest change first; search narrows them and "/" focuses it',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, 'lister@example.com');
      const { page } = studio;
      try {
        const names = ['Night Drive', 'Dawn Chorus', 'Night Market', '<img src=x onerror=alert(1)>'];
        for (const name of names) await studio.signedIn.api.POST('/projects', { body: { name } });
        await studio.open('/');
        const projects = page.getByRole('list', { name: 'Projects' }).getByRole('link');
        await expect.poll(() => projects.allTextContents()).toEqual([...names].reverse());
        // A name is text, never markup.
        expect(await page.locator('img[src="x"]').count()).toBe(0);
        if (backend === 'sqlite') await checkLayout(page, 'library');

        await page.locator('body').press('/');
        expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe('Search');
        await page.keyboard.type('night');
        await expect.poll(() => projects.allTextContents()).toEqual(['Night Market', 'Night Drive']);
        await page.getByRole('searchbox', { name: 'Search' }).fill('nothing like it');
        await page.getByText('No project matches.').waitFor();
        await page.getByRole('searchbox', { name: 'Search' }).fill('');

        // Everything here is this account's own: Shared with me is empty, Mine has them all.
        await page.getByRole('button', { name: 'Shared with me', exact: true }).click();
        await page.getByText('No project matches.').waitFor();
        await page.getByRole('button', { name: 'Mine', exact: true }).click();
        await expect.poll(() => projects.count()).toBe(names.length);
        expect(await page.getByRole('button', { name: 'Mine', exact: true }).getAttribute('aria-pressed')).toBe('true');

        // The link opens the project's page, in the app (no reload: the frame stays drawn).
        await page.getByRole('link', { name: 'Dawn Chorus', exact: true }).click();
        await page.waitForURL(/\/projects\/[^/]+$/);
        await page.goBack();
        await expect.poll(() => page.getByRole('heading', { level: 1 }).textContent()).toBe('Library');

        expect(await studio.problems()).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'draws a library of 300 projects a window at a time: the first screen at once, the rest as it scrolls; search and Tab reach projects not drawn',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, 'collector@example.com');
      const { page } = studio;
      try {
        const { store, blobs } = t.server.ctx;
        const user = (await store.users.findByEmail('collector@example.com'))!;
        // Made a minute apart, every other one with artwork: the newest is Project 0300, the oldest Project 0001.
        await makeLibrary(store, blobs, user.id, 300, 0);
        await studio.open('/');
        const list = page.getByRole('list', { name: 'Projects' });
        await expect.poll(() => list.getAttribute('aria-busy')).toBeNull();
        const items = list.getByRole('listitem');
        const drawn = await items.count();
        expect(drawn).toBeGreaterThan(10);
        expect(drawn).toBeLessThan(150);
        // Each drawn item says where it stands in the whole list (ARIA 1.2 aria-setsize, aria-posinset).
        expect(await items.first().getAttribute('aria-setsize')).toBe('300');
        expect(await items.first().getAttribute('aria-posinset')).toBe('1');
        expect(await list.getByRole('link').first().textContent()).toBe('Project 0300');
        expect(await page.getByRole('link', { name: 'Project 0001', exact: true }).count()).toBe(0);
        if (backend === 'sqlite') await checkLayout(page, 'library-windowed');

        // Search works on the list, not the document: it finds a project not drawn.
        await page.getByRole('searchbox', { name: 'Search' }).fill('Project 0001');
        await expect.poll(() => list.getByRole('link').allTextContents()).toEqual(['Project 0001']);
        await page.getByRole('searchbox', { name: 'Search' }).fill('');
        await expect.poll(() => items.first().getAttribute('aria-setsize')).toBe('300');

        // Tab walks the cards past the first window: each Tab scrolls its card into view, which draws the next ones.
        const nextFrame = () => page.evaluate(() => new Promise((done) => requestAnimationFrame(() => done(null))));
        await list.getByRole('link').first().focus();
        for (let i = 0; i < 60; i++) {
          await page.keyboard.press('Tab');
          await nextFrame();
        }
        expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Project 0240');
        expect(await page.evaluate(() => document.activeElement?.closest('li')?.getAttribute('aria-posinset'))).toBe('61');

        // Scrolled to the end, the last project is drawn, where the list ends.
        await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
        await page.getByRole('link', { name: 'Project 0001', exact: true }).waitFor();
        expect(await items.last().getAttribute('aria-posinset')).toBe('300');
        const gap = await page.evaluate(() => {
          const list = document.querySelector('ul[aria-label="Projects"]')!;
          const last = list.lastElementChild!.getBoundingClientRect();
          return list.getBoundingClientRect().bottom - last.bottom;
        });
        expect(Math.abs(gap)).toBeLessThan(2);

        expect(await studio.problems()).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
