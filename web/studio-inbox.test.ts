/**
 * The studio's inbox (/inbox) in headless Chromium against a real server,
 * on SQLite and PostgreSQL, with real audio made by ffmpeg: a guest's
 * comment made through the player's API shows with the visible word
 * "Guest", its track and its time, a link to the track at that moment;
 * the bar's Inbox link counts the open comments; Reply sends a reply
 * (createComment with parentid) and Done marks it done (updateComment), as
 * the API then shows, and the count follows. Screenshots at 1280 and 360
 * px in /tmp/shots-studio/, axe-core clean, no CSP violation, no console
 * error, nothing from another origin.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../server/testing/databases.ts';
import { json, useTestServer } from '../server/testing/harness.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { sineWav } from '../server/testing/audio.ts';
import { checkLayout, studioPage } from './testing/studio-browser.ts';

const BROWSER_TEST_MS = 120_000;

describe.each(backends)('the studio inbox (%s)', (backend) => {
  const t = useTestServer(backend);
  const chromium = useBrowser();

  it(
    "shows a guest's comment with Guest, its track and time; Reply and Done go through the API, and the bar's count follows",
    async () => {
      const studio = await studioPage(chromium.browser, t.server, `inbox-${backend}@example.com`);
      const { page } = studio;
      const api = studio.signedIn.api;
      try {
        // A project with one track, shared on a player that takes comments.
        const project = (await api.POST('/projects', { body: { name: 'Spring EP' } })).data!;
        const uploaded = await api.uploadFile(project.id, { name: 'Night Drive.wav', mimeType: 'audio/wav' }, await sineWav(3));
        const fileid = uploaded.data!.upload.boxid;
        const player = (await api.POST('/players', { body: { name: 'For the label', projectid: project.id, options: { comments: true } } })).data!;

        // Empty first: no count in the bar.
        await studio.open('/inbox');
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Inbox');
        await page.getByText('No comments yet.').waitFor();
        expect(await page.getByRole('link', { name: 'Inbox', exact: true }).count()).toBe(1);
        if (backend === 'sqlite') await checkLayout(page, 'inbox-empty');

        // A listener comments through the player's API, under a name of their choosing.
        const session = await t.fetch(`/players/${player.id}/session`, { ...json({ name: 'Alex (A&R)' }), headers: { 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'same-origin' } });
        expect(session.status).toBe(200);
        const cookie = session.headers.get('set-cookie')!.split(';')[0];
        const posted = await t.fetch(`/players/${player.id}/files/${fileid}/comments`, {
          ...json({ message: 'Love the bridge <b>here</b>', audioTimestamp: 1.5 }),
          headers: { 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'same-origin', Cookie: cookie },
        });
        expect(posted.status).toBe(200);
        const guestComment = (await posted.json()) as { id: string };
        // And one of the owner's own, already done: open ones come first.
        const own = (await api.POST('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid: project.id, fileid } }, body: { message: 'Note to self: louder kick', completed: true } })).data!;

        // A navigation reads the count again.
        await page.getByRole('link', { name: 'Library', exact: true }).click();
        await page.getByRole('link', { name: 'Inbox 1', exact: true }).click();
        const comments = page.getByRole('list', { name: 'Comments' }).locator(':scope > li');
        await expect.poll(() => comments.count()).toBe(2);
        const guest = comments.first();
        expect(await guest.textContent()).toContain('Love the bridge <b>here</b>');
        expect(await page.locator('.message b').count()).toBe(0);
        await guest.getByText('Guest', { exact: true }).waitFor();
        expect(await guest.getByText('Alex (A&R)', { exact: true }).count()).toBe(1);
        expect(await guest.textContent()).toContain('Spring EP');
        expect(await comments.nth(1).textContent()).toContain('Note to self: louder kick');
        expect(await comments.nth(1).getByText('Guest', { exact: true }).count()).toBe(0);
        // The time opens the track at that moment, in the project's page.
        const time = guest.getByRole('link', { name: '0:02', exact: true });
        expect(await time.getAttribute('href')).toBe(`/projects/${project.id}?file=${fileid}&t=1.5#comment-${guestComment.id}`);
        // The guest's comment is a notification too, linking to it.
        await page.getByRole('list', { name: 'Notifications' }).getByText('Alex (A&R)', { exact: false }).first().waitFor();
        if (backend === 'sqlite') await checkLayout(page, 'inbox');

        // Reply: a textbox and Send; the reply is the guest comment's, through the API.
        await guest.getByRole('button', { name: 'Reply', exact: true }).click();
        await guest.getByRole('textbox', { name: 'Reply', exact: true }).fill('Thanks, keeping it.');
        if (backend === 'sqlite') await checkLayout(page, 'inbox-reply');
        await guest.getByRole('button', { name: 'Send', exact: true }).click();
        await guest.getByRole('list', { name: 'Replies to Alex (A&R)' }).getByText('Thanks, keeping it.').waitFor();
        const thread = (await api.GET('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid: project.id, fileid } } })).data!;
        expect(thread.find((comment) => comment.message === 'Thanks, keeping it.')).toMatchObject({ parentid: guestComment.id, isReply: true });

        // Done: the comment is done through the API, and the bar counts nothing open.
        await guest.getByRole('button', { name: 'Done', exact: true }).click();
        await guest.getByRole('button', { name: 'Reopen', exact: true }).waitFor();
        const after = (await api.GET('/projects/{projectid}/files/{fileid}/comments/{commentid}', { params: { path: { projectid: project.id, fileid, commentid: guestComment.id } } })).data!;
        expect(after.completed).toBe(true);
        await page.getByRole('link', { name: 'Inbox', exact: true }).waitFor();
        expect((await api.GET('/me/inbox')).data).toMatchObject({ openComments: 0 });
        if (backend === 'sqlite') await checkLayout(page, 'inbox-done');

        // The Open filter: nothing left.
        await page.getByRole('button', { name: 'Open', exact: true }).click();
        await page.getByText('Nothing open: every comment is done.').waitFor();
        expect(own.completed).toBe(true);

        expect(await studio.problems()).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
