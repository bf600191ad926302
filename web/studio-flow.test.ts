/**
 * The studio's one chained flow (issue 21, Tests: "Chromium (playwright-core)
 * drives every flow above on SQLite and PostgreSQL with real audio made by
 * ffmpeg: sign in, make a project, upload ten files by the drop zone, see
 * them analysed, watch "Night Drive v2.wav" stack itself, share with a
 * password and every option checked in the player's view, open the link as
 * a listener, comment as a guest, and find the comment in the inbox and in
 * the mail."), in one run per store, each step starting from where the one
 * before left the musician, against a real server that analyses audio and
 * mails through a real SMTP server on loopback (server/testing/smtp-sink.ts).
 *
 * The listener also sends a file through the link's upload portal (the
 * issue: "Files that arrived through a portal show here too, waiting to be
 * filed"), which the inbox then lists and which is mailed too.
 *
 * The per-page tests (web/studio-*.test.ts, web/mail-flows.test.ts,
 * web/portal-page.test.ts) hold the details of each page; this one holds
 * that the pages chain. Screenshots at 1280 and 360 px in /tmp/shots-studio/
 * (flow-*) of the states no other test shoots, axe-core clean; no CSP
 * violation, console error or request to another origin on any page. Every
 * wait ends on an event or a condition with a deadline.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Locator, Page } from 'playwright-core';
import { hashPassword } from '../server/auth/passwords.ts';
import { makeAudio, sineWav } from '../server/testing/audio.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { backends } from '../server/testing/databases.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { linkTo, startSmtpSink, type ReceivedMail, type SmtpSink } from '../server/testing/smtp-sink.ts';
import type { Schemas } from '../generated/client.ts';
import { controls, pause, watchedPage, type WatchedPage } from './testing/player-browser.ts';
import { checkLayout } from './testing/studio-browser.ts';
import { formatBytes } from './studio/ui.tsx';

/** Long: ten files and a portal upload are analysed on two cores shared with whatever else runs. */
const FLOW_TEST_MS = 600_000;
const ANALYSIS_MS = 240_000;
/** What a mail may take: the notification job, then the outbox's, both polled every JOB_POLL_MS. */
const MAIL_MS = 30_000;
/** What the page may take to show a change the server made: its own polls (1.5 s for files in analysis) on a loaded machine. */
const PAGE_POLL = { timeout: 15_000 };
/** The deadline of each step on a page (a click, a wait for an element, a screenshot). */
const PAGE_DEADLINE_MS = 45_000;

const PASSWORD = 'a musician with a long passphrase';
const LINK_PASSWORD = 'night-drive-2026';
const GUEST = 'Alex (A&R)';
const GUEST_COMMENT = 'Love the bridge here, can the vocal come up a touch?';
const UPLOADER = 'Sam Rivera';
const PORTAL_FILE = 'Bass stem.wav';
const ISRC = 'GBAYE2600001';

interface Flow extends WatchedPage {
  /** Requests to any origin but the server's own. */
  foreign: string[];
}

/** A watched page (CSP violations, console errors, exceptions) that also records every request to another origin. */
async function flowPage(browser: Parameters<typeof watchedPage>[0], origin: string): Promise<Flow> {
  const watched = await watchedPage(browser);
  // More than the player tests' 15 s: a full-page screenshot of the player page drawing nine waveforms took longer
  // than that on two cores shared with other test runs. Every wait still ends on its event or this deadline.
  watched.page.setDefaultTimeout(PAGE_DEADLINE_MS);
  const foreign: string[] = [];
  watched.page.on('request', (request) => {
    const url = new URL(request.url());
    if (url.protocol !== 'data:' && url.protocol !== 'blob:' && url.origin !== origin) foreign.push(request.url());
  });
  return { ...watched, foreign };
}

/** Drops files on the page as a person does: dragenter, dragover and drop with a DataTransfer of them, built in the page. */
async function dropFiles(page: Page, files: Array<{ name: string; type: string; bytes: Buffer }>): Promise<void> {
  const transfer = await page.evaluateHandle(
    (list) => {
      const data = new DataTransfer();
      for (const { name, type, base64 } of list) data.items.add(new File([Uint8Array.from(atob(base64), (c) => c.charCodeAt(0))], name, { type }));
      return data;
    },
    files.map(({ name, type, bytes }) => ({ name, type, base64: bytes.toString('base64') })),
  );
  for (const type of ['dragenter', 'dragover', 'drop']) await page.dispatchEvent('#main', type, { dataTransfer: transfer });
}

const rowOf = (page: Page, name: string) => page.getByRole('list', { name: 'Files' }).getByRole('listitem').filter({ has: page.getByRole('checkbox', { name: `Select ${name}`, exact: true }) });
const check = (scope: Locator, name: string) => scope.getByRole('checkbox', { name, exact: true });
const combo = (scope: Locator, name: string) => scope.getByRole('combobox', { name, exact: true });
const textbox = (scope: Locator, name: string) => scope.getByRole('textbox', { name, exact: true });

describe.each(backends)('the studio, end to end (%s)', (backend) => {
  const env: Record<string, string> = { PROCESSING: 'in-process', JOB_POLL_MS: '50', JOB_BACKOFF_MS: '100', MAIL_FROM: 'Audio Share <audio@example.org>' };
  let sink: SmtpSink;
  beforeAll(async () => {
    sink = await startSmtpSink();
    env.SMTP_URL = sink.url;
  });
  const t = useTestServer(backend, env);
  afterAll(async () => {
    await sink.close();
  });
  const chromium = useBrowser();
  const at = (path: string) => `${t.server.address}${path}`;

  /** The next mail to `email` whose subject is `subject`, passing over others (an account's mails are not this test's to count). */
  async function mailTo(email: string, subject: string): Promise<ReceivedMail> {
    const deadline = Date.now() + MAIL_MS;
    for (;;) {
      const mail = await sink.nextTo(email, Math.max(1, deadline - Date.now()));
      if (mail.subject === subject) return mail;
    }
  }

  it(
    'signs in, makes a project, uploads ten files by the drop zone, stacks the v2, shares with a password and every option, and finds the guest comment and the portal file in the inbox and the mail',
    async () => {
      const email = `musician-${backend}@example.com`;
      await t.server.ctx.store.users.create({ email, name: 'Robin', passwordHash: await hashPassword(PASSWORD), emailVerified: true, isAdmin: false }, Date.now());
      const { api } = await t.as(email);
      const origin = new URL(t.server.address).origin;

      // The ten files, made by ffmpeg while the browser signs in: eight WAVs, a FLAC that carries tags and an ISRC, and the v2.
      const made = Promise.all([
        sineWav(2, 300).then((bytes) => ({ name: 'Night Drive.wav', type: 'audio/wav', bytes })),
        ...Array.from({ length: 7 }, (_, i) => sineWav(2, 350 + i * 50).then((bytes) => ({ name: `Track 0${i + 1}.wav`, type: 'audio/wav', bytes }))),
        makeAudio('tagged.flac', [
          '-f', 'lavfi', '-i', 'sine=frequency=750:sample_rate=48000:duration=2', '-ac', '2', '-c:a', 'flac',
          '-metadata', 'title=Daybreak', '-metadata', 'artist=The Late Shift', '-metadata', 'album=Spring EP', '-metadata', `ISRC=${ISRC}`,
        ]).then((bytes) => ({ name: 'Track 08.flac', type: 'audio/flac', bytes })),
        // Last, so that "Night Drive.wav" is in the project when its upload starts: three travel at a time, in order.
        sineWav(2, 880).then((bytes) => ({ name: 'Night Drive v2.wav', type: 'audio/wav', bytes })),
      ]);

      const studio = await flowPage(chromium.browser, origin);
      const { page } = studio;
      try {
        // Signed out, the studio sends the musician to sign in; the form signs them in and lands on the library.
        await page.goto(at('/'));
        await page.waitForURL(at('/signin'));
        await page.locator('main#account[data-state="ready"]').waitFor();
        await textbox(page.locator('main'), 'Email').fill(email);
        await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
        await page.getByRole('button', { name: 'Sign in', exact: true }).click();
        await page.waitForURL(at('/'));
        await page.locator('#studio[data-state="ready"]').waitFor();
        await page.getByRole('heading', { level: 1, name: 'Library' }).waitFor();

        // New project: the dialog makes it and the studio lands on its page.
        await page.getByRole('button', { name: 'New project', exact: true }).click();
        const newProject = page.getByRole('dialog', { name: 'New project' });
        await textbox(newProject, 'Project name').fill('Spring EP');
        await newProject.getByRole('button', { name: 'Create', exact: true }).click();
        await page.waitForURL(/\/projects\/[^/?#]+$/);
        const projectid = decodeURIComponent(new URL(page.url()).pathname.split('/').pop()!);
        await page.getByRole('heading', { level: 1, name: 'Spring EP' }).waitFor();
        await page.getByText('No files yet.').waitFor();

        // Ten files dropped on the page: a progressbar each, named by the file; all uploaded.
        const files = await made;
        await dropFiles(page, files);
        const uploads = page.getByRole('region', { name: 'Uploads' });
        for (const { name } of files) await uploads.getByRole('progressbar', { name, exact: true }).waitFor();
        await expect.poll(() => uploads.getByText('Uploaded.').count(), { timeout: ANALYSIS_MS }).toBe(10);
        for (const { name } of files) {
          const bar = uploads.getByRole('progressbar', { name, exact: true });
          expect(await bar.evaluate((element) => (element as HTMLProgressElement).value === (element as HTMLProgressElement).max), name).toBe(true);
        }

        // "Night Drive v2.wav" stacked itself on "Night Drive.wav": one stack of two versions, the v2 newest.
        const tree = page.getByRole('list', { name: 'Files' });
        const stackToggle = tree.getByRole('button', { name: 'Night Drive', exact: true });
        await stackToggle.waitFor();
        await expect.poll(() => rowOf(page, 'Night Drive').textContent(), PAGE_POLL).toContain('2 versions');
        expect(await rowOf(page, 'Night Drive.wav').count()).toBe(0);
        await stackToggle.click();
        expect(await stackToggle.getAttribute('aria-expanded')).toBe('true');
        const v2Row = rowOf(page, 'Night Drive v2.wav');
        await v2Row.waitFor();
        expect(await v2Row.getByText('Newest', { exact: true }).count()).toBe(1);
        expect(await v2Row.getByText('v2', { exact: true }).count()).toBe(1);
        expect(await rowOf(page, 'Night Drive.wav').getByText('Newest', { exact: true }).count()).toBe(0);

        // Analysed, as the page shows (it reads again the files in analysis) and the API says: every file its loudness.
        await expect.poll(() => tree.getByText(/LUFS$/).count(), { timeout: ANALYSIS_MS }).toBe(10);
        expect(await tree.getByText('Processing').count()).toBe(0);
        expect(await rowOf(page, 'Track 08.flac').locator('.row-facts').textContent()).toMatch(/0:02.*-?\d+\.\d LUFS.*-?\d+\.\d dBTP.*FLAC · 48 kHz/);
        const stored = (await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } })).data!;
        const fileBoxes = stored.filter((box): box is Schemas['FileBox'] => box.object === 'file');
        expect(fileBoxes.map((box) => [box.name, box.status]).sort()).toEqual(files.map(({ name }) => [name, 'ready']).sort());
        const nightDrive = stored.find((box) => box.object === 'stack' && box.name === 'Night Drive');
        const nameOf = (id: string) => stored.find((box) => box.id === id)?.name;
        expect(nightDrive?.object === 'stack' && nightDrive.children.map((child) => nameOf(child.id))).toEqual(['Night Drive.wav', 'Night Drive v2.wav']);
        const v2 = stored.find((box) => box.name === 'Night Drive v2.wav')!;

        // The project's size, in its head, counts them (the page reads the project again as each file is stored).
        const projectHead = page.getByText(/^Yours · /);
        const sizeOfTen = (await api.GET('/projects/{projectid}', { params: { path: { projectid } } })).data!.size!;
        expect(sizeOfTen).toBe(files.reduce((sum, file) => sum + file.bytes.length, 0));
        await expect.poll(() => projectHead.textContent(), PAGE_POLL).toBe(`Yours · ${formatBytes(sizeOfTen)}`);
        if (backend === 'sqlite') await checkLayout(page, 'flow-project-ten');

        // Share the project: a password and every option checked, and the upload portal open.
        await page.getByRole('button', { name: 'Share', exact: true }).first().click();
        const dialog = page.getByRole('dialog', { name: 'Share' });
        await textbox(dialog, 'Player name').waitFor();
        expect(await textbox(dialog, 'Player name').inputValue()).toBe('Spring EP');
        const options = ['Downloads', 'Comments', 'All versions', 'Show metadata', 'Show ISRC', 'Download notice', 'Studio branding', 'Loudness match'];
        for (const name of options) await check(dialog, name).check();
        await combo(dialog, 'Loudness platform').selectOption('spotify');
        await combo(dialog, 'Quality').selectOption('lossless');
        await combo(dialog, 'Subtitle').selectOption('artist');
        await dialog.getByLabel('Password', { exact: true }).fill(LINK_PASSWORD);
        await dialog.getByRole('switch', { name: 'Upload portal', exact: true }).click();
        await textbox(dialog, 'Portal title').fill('Send us your stems');
        if (backend === 'sqlite') await checkLayout(page, 'flow-share-every-option');
        await dialog.getByRole('button', { name: 'Create link', exact: true }).click();
        const link = textbox(dialog, 'Link');
        await link.waitFor();
        const playerUrl = await link.inputValue();
        const players = (await api.GET('/players', { params: { query: {} } })).data!;
        expect(players).toHaveLength(1);
        const player = players[0];
        expect(playerUrl).toBe(player.playerUrl);
        expect(player).toMatchObject({
          projectid,
          public: true,
          hasPassword: true,
          options: { downloads: true, comments: true, stacks: true, metadata: true, isrc: true, serviceCTA: true, studio: true, loudnessMatch: true, loudnessPlatform: 'spotify', quality: 'lossless', boxSubtitle: 'artist' },
          upload: { enabled: true, header: 'Send us your stems' },
        });
        await dialog.getByRole('button', { name: 'Done', exact: true }).click();
        await dialog.waitFor({ state: 'hidden' });

        // A listener, in a browser of their own (no session): the password, then what every option gives.
        const listener = await flowPage(chromium.browser, origin);
        let commentid: string;
        try {
          const lp = listener.page;
          await lp.goto(playerUrl);
          await lp.getByRole('textbox', { name: 'Password' }).fill(LINK_PASSWORD);
          await lp.getByRole('button', { name: 'Open', exact: true }).click();
          await lp.locator('main#app[data-state="ready"]').waitFor();
          const tracks = lp.locator('ol#tracks > li.track');
          expect(await tracks.count()).toBe(9);
          const nightDriveTrack = tracks.filter({ has: lp.getByRole('button', { name: 'Night Drive', exact: true }) });
          // All versions: the stack is one track of two versions, with the A/B switch, the newest chosen.
          expect(await nightDriveTrack.textContent()).toContain('2 versions');
          await nightDriveTrack.getByRole('button', { name: 'Night Drive', exact: true }).click();
          await expect.poll(() => nightDriveTrack.getAttribute('aria-current'), PAGE_POLL).toBe('true');
          await pause(lp);
          const versions = controls(lp).versions;
          await versions.waitFor();
          expect(await versions.getByRole('radio').count()).toBe(2);
          expect(await versions.getByRole('radio', { name: /^\s*v2\b/ }).isChecked()).toBe(true);
          expect(await versions.getByRole('radio', { name: /^\s*Night Drive\.wav/ }).isChecked()).toBe(false);
          // Loudness match: its switch, on.
          expect(await controls(lp).loudnessMatch.isChecked()).toBe(true);
          // Quality: lossless first.
          expect(await lp.getByRole('combobox', { name: 'Quality' }).inputValue()).toBe('lossless');
          // Metadata and ISRC, from the FLAC's tags; the subtitle is its artist.
          const tagged = tracks.filter({ hasText: 'Track 08' });
          const metadata = tagged.locator('dl.metadata');
          expect(await metadata.locator('dt').allTextContents()).toEqual(['Title', 'Artist', 'Album', 'ISRC']);
          expect(await metadata.locator('dd').allTextContents()).toEqual(['Daybreak', 'The Late Shift', 'Spring EP', ISRC]);
          expect(await tagged.locator('.subtitle').textContent()).toBe('The Late Shift');
          // A file without an artist tag: its uploader's display name, never their email.
          expect(await tracks.filter({ hasText: 'Track 01' }).locator('.subtitle').textContent()).toBe('Robin');
          // The portal: a link to it.
          expect(await lp.getByRole('link', { name: "Send files to this player's owner" }).count()).toBe(1);
          // Before the download below: in a CI run this page's full-page screenshot, taken after it, hung twice for 20 s.
          if (backend === 'sqlite') await checkLayout(lp, 'flow-listener-every-option');
          // Downloads: one a track; a download shows the notice.
          expect(await lp.getByRole('link', { name: /^Download / }).count()).toBe(9);
          const downloaded = lp.waitForEvent('download');
          await lp.getByRole('link', { name: 'Download Night Drive', exact: true }).click();
          expect((await downloaded).suggestedFilename()).toBe('Night Drive v2.wav');
          await lp.getByRole('status').filter({ hasText: 'Your download has started.' }).waitFor();

          // Comments: a guest's, under a name they type, on the version that plays.
          const comments = lp.getByRole('region', { name: 'Comments' });
          await textbox(comments, 'Your name').fill(GUEST);
          await textbox(comments, 'Comment').fill(GUEST_COMMENT);
          await comments.getByRole('button', { name: 'Post comment' }).click();
          const posted = comments.locator('li.comment', { hasText: GUEST_COMMENT });
          await posted.waitFor();
          await posted.getByText('Guest', { exact: true }).waitFor();
          commentid = (await posted.getAttribute('data-comment-id'))!;
          expect(commentid).toBeTruthy();

          // Files through the portal, from the player page's link.
          await lp.getByRole('link', { name: "Send files to this player's owner" }).click();
          await lp.waitForURL(at(`/u/${player.id}`));
          await textbox(lp.locator('main'), 'Your name').fill(UPLOADER);
          await lp.getByLabel('Choose files', { exact: true }).setInputFiles([{ name: PORTAL_FILE, mimeType: 'audio/wav', buffer: await sineWav(1, 110) }]);
          await lp.getByRole('button', { name: 'Upload', exact: true }).click();
          await lp.getByRole('heading', { name: 'Thank you' }).waitFor({ timeout: 60_000 });

          expect(await listener.problems()).toEqual([]);
          expect(listener.foreign).toEqual([]);
        } finally {
          await listener.close();
        }

        // The API has the comment as the guest's, on the v2.
        const thread = (await api.GET('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid: v2.id } } })).data!;
        expect(thread.find((comment) => comment.id === commentid)).toMatchObject({ message: GUEST_COMMENT, creator: { kind: 'listener', name: GUEST } });

        // Back in the studio: the bar counts the open comment, and the inbox shows it with its track, version and Guest.
        await page.getByRole('link', { name: 'Library', exact: true }).click();
        await page.getByRole('heading', { level: 1, name: 'Library' }).waitFor();
        await page.getByRole('link', { name: 'Inbox 1', exact: true }).click();
        await page.getByRole('heading', { level: 1, name: 'Inbox' }).waitFor();
        const inboxComment = page.getByRole('list', { name: 'Comments' }).locator(':scope > li').filter({ hasText: GUEST_COMMENT });
        await inboxComment.waitFor();
        await inboxComment.getByText('Guest', { exact: true }).waitFor();
        expect(await inboxComment.getByText(GUEST, { exact: true }).count()).toBe(1);
        expect(await inboxComment.locator('.track').textContent()).toBe('Night Drive');
        expect(await inboxComment.locator('.version').textContent()).toContain('v2 (Night Drive v2.wav)');
        expect(await inboxComment.textContent()).toContain('Spring EP');
        expect(await inboxComment.getByRole('link').getAttribute('href')).toMatch(new RegExp(`^/projects/${projectid}\\?file=${v2.id}(&t=[\\d.]+)?#comment-${commentid}$`));
        // The portal's file, waiting to be filed, with its sender.
        const held = page.getByRole('list', { name: 'Files waiting to be filed' }).getByRole('listitem').filter({ hasText: PORTAL_FILE });
        await held.waitFor();
        expect(await held.textContent()).toContain(`from ${UPLOADER}`);
        expect(await held.getByRole('link', { name: 'Open in Spring EP', exact: true }).count()).toBe(1);
        const heldFiles = (await api.GET('/me/held-files', { params: { query: {} } })).data!;
        expect(heldFiles.map((one) => one.file.name)).toEqual([PORTAL_FILE]);
        // And both as notifications.
        const notifications = page.getByRole('list', { name: 'Notifications' });
        await notifications.getByText(`${GUEST} (guest) commented on “Night Drive v2.wav”`, { exact: false }).waitFor();
        await notifications.getByText(`${UPLOADER} sent “${PORTAL_FILE}” through the upload portal`, { exact: false }).waitFor();
        if (backend === 'sqlite') await checkLayout(page, 'flow-inbox-comment-and-held-file');

        // The mails: the comment's links straight to it; the portal's to the file.
        const commentMail = await mailTo(email, `${GUEST} (guest) commented on “Night Drive v2.wav”`);
        expect(commentMail.text).toContain(GUEST_COMMENT);
        const commentUrl = linkTo(commentMail, `/projects/${projectid}`);
        expect(commentUrl.toString()).toBe(at(`/projects/${projectid}?file=${v2.id}#comment-${commentid}`));
        const portalMail = await mailTo(email, `“${PORTAL_FILE}” arrived through your upload portal`);
        const heldFile = heldFiles[0].file;
        expect(linkTo(portalMail, `/projects/${projectid}`).toString()).toBe(at(`/projects/${projectid}?file=${heldFile.id}`));

        // The comment's link, opened in the studio: the project, its stack open on the v2's row, the v2 ready to play.
        await page.goto(commentUrl.toString());
        await page.locator('#studio[data-state="ready"]').waitFor();
        await page.getByRole('heading', { level: 1, name: 'Spring EP' }).waitFor();
        expect(new URL(page.url()).hash).toBe(`#comment-${commentid}`);
        // Read afresh, not from the browser's cache: the portal's file counts in the size.
        const sizeNow = (await api.GET('/projects/{projectid}', { params: { path: { projectid } } })).data!.size!;
        expect(sizeNow).toBeGreaterThan(sizeOfTen);
        await expect.poll(() => projectHead.textContent(), PAGE_POLL).toBe(`Yours · ${formatBytes(sizeNow)}`);
        const landed = tree.locator(`li[data-fileid="${v2.id}"]`);
        await landed.waitFor();
        expect(await landed.getAttribute('class')).toContain('highlighted');
        expect(await tree.getByRole('button', { name: 'Night Drive', exact: true }).getAttribute('aria-expanded')).toBe('true');
        const panel = page.getByRole('region', { name: 'Player' });
        await expect.poll(() => panel.locator('.now-title').textContent(), PAGE_POLL).toBe('Night Drive — v2');
        expect(await panel.getByRole('radiogroup', { name: 'Version' }).getByRole('radio', { name: /^v2/ }).isChecked()).toBe(true);
        if (backend === 'sqlite') await checkLayout(page, 'flow-comment-link');

        // The portal mail's link: the file, in the held folder, opened.
        await page.goto(linkTo(portalMail, `/projects/${projectid}`).toString());
        await page.locator('#studio[data-state="ready"]').waitFor();
        const portalRow = tree.locator(`li[data-fileid="${heldFile.id}"]`);
        await portalRow.waitFor();
        expect(await portalRow.getAttribute('class')).toContain('highlighted');
        expect(await tree.getByRole('button', { name: 'Portal uploads', exact: true }).getAttribute('aria-expanded')).toBe('true');

        expect(await studio.problems()).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    FLOW_TEST_MS,
  );
});
