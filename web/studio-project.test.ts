/**
 * A project's page in the studio (/projects/{projectid}) in headless
 * Chromium against a real server, on SQLite and PostgreSQL, with real WAVs
 * made by ffmpeg: ten files dropped on the page upload three at a time with
 * a progressbar each, and show their analysis (duration, LUFS, true peak,
 * format); "Night Drive v2.wav" stacks itself on "Night Drive.wav"; each
 * organising action lands in the API (New folder, Rename, Move to…, Stack
 * versions, Version name, reordering, Hide, Move to trash, Restore, Sort
 * by); a file plays with its waveform, A/B between versions, from a deep
 * link's moment; a project of 700 boxes drawn a window at a time, which a
 * deep link and scrolling reach whole. Screenshots at 1280 and 360 px in
 * /tmp/shots-studio/.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import type { ApiClient } from '../generated/client.ts';
import { makeAudioFile, sineWav } from '../server/testing/audio.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { backends } from '../server/testing/databases.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { audioState, playingPast, waitForAudio } from './testing/player-browser.ts';
import { analysedTake, makeBigProject } from '../server/testing/studio-data.ts';
import { checkLayout, studioPage } from './testing/studio-browser.ts';

/** Generous: analysis shares two cores with everything else running on the machine. */
const BROWSER_TEST_MS = 480_000;
const ANALYSIS_MS = 240_000;

/** Drops files on the page (or on the element `on` selects) as a person does: dragenter, dragover and drop with a DataTransfer holding them. */
async function dropFiles(page: Page, files: Array<{ name: string; bytes: Buffer }>, on = '#main', beforeDrop?: () => Promise<void>): Promise<void> {
  const transfer = await page.evaluateHandle(
    (list) => {
      const data = new DataTransfer();
      for (const { name, base64 } of list) {
        const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
        data.items.add(new File([bytes], name, { type: 'audio/wav' }));
      }
      return data;
    },
    files.map(({ name, bytes }) => ({ name, base64: bytes.toString('base64') })),
  );
  await page.dispatchEvent(on, 'dragenter', { dataTransfer: transfer });
  await page.dispatchEvent(on, 'dragover', { dataTransfer: transfer });
  await beforeDrop?.();
  await page.dispatchEvent(on, 'drop', { dataTransfer: transfer });
}

async function uploadAudio(api: ApiClient, projectid: string, name: string, bytes: Buffer, parentid?: string) {
  const { data, error } = await api.uploadFile(projectid, { name, mimeType: 'audio/wav', ...(parentid ? { parentid } : {}) }, bytes);
  if (!data) throw new Error(`Uploading ${name}: ${JSON.stringify(error)}`);
  return data;
}

async function boxesOf(api: ApiClient, projectid: string) {
  const { data } = await api.GET('/projects/{projectid}/all', { params: { path: { projectid } } });
  return data ?? [];
}

const rowOf = (page: Page, name: string) => page.getByRole('list', { name: 'Files' }).getByRole('listitem').filter({ has: page.getByRole('checkbox', { name: `Select ${name}`, exact: true }) });

/** Opens a row's actions and presses one, by its exact name. */
async function rowAction(page: Page, name: string, action: string): Promise<void> {
  const row = rowOf(page, name);
  await row.getByRole('button', { name: `Actions for ${name}`, exact: true }).click();
  await row.getByRole('button', { name: action, exact: true }).click();
}

describe.each(backends)('the studio project page (%s)', (backend) => {
  // Audio analysed in the server's own process, quickly polled: the page shows it as it finishes.
  const t = useTestServer(backend, { PROCESSING: 'in-process', JOB_POLL_MS: '50', JOB_BACKOFF_MS: '100' });
  const chromium = useBrowser();

  it(
    'uploads ten files dropped on the page, three at a time with a progressbar each, and shows them analysed; a v2 stacks itself',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, 'uploader@example.com');
      const { page } = studio;
      const api = studio.signedIn.api;
      try {
        const { data: project } = await api.POST('/projects', { body: { name: 'Spring EP' } });
        const projectid = project!.id;
        await studio.open(`/projects/${projectid}`);
        expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Spring EP');
        await page.getByText('No files yet.').waitFor();
        // The upload input is found by its label, and the keyboard reaches it.
        expect(await page.getByLabel('Upload files', { exact: true }).getAttribute('type')).toBe('file');
        if (backend === 'sqlite') await checkLayout(page, 'project-empty');

        const names = ['Night Drive.wav', ...Array.from({ length: 9 }, (_, i) => `Track ${String(i + 1).padStart(2, '0')}.wav`)];
        const files = await Promise.all(names.map(async (name, i) => ({ name, bytes: await sineWav(2, 300 + i * 50) })));

        // The PUTs wait until the page has been seen uploading: then they go on.
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let inFlight = 0;
        let mostAtOnce = 0;
        // The requests that start each file's bytes: tus's creation POST.
        const startRoute = '**/api/v1/projects/*/tus';
        await page.route(startRoute, async (route) => {
          inFlight += 1;
          mostAtOnce = Math.max(mostAtOnce, inFlight);
          await held;
          await route.continue();
          inFlight -= 1;
        });
        await dropFiles(page, files);
        const uploads = page.getByRole('region', { name: 'Uploads' });
        for (const name of names) await uploads.getByRole('progressbar', { name, exact: true }).waitFor();
        await expect.poll(() => inFlight).toBe(3);
        expect(await uploads.getByText('Waiting…').count()).toBe(7);
        if (backend === 'sqlite') await checkLayout(page, 'project-uploading');
        release();
        await expect.poll(() => uploads.getByText('Uploaded.').count(), { timeout: ANALYSIS_MS }).toBe(10);
        expect(mostAtOnce).toBe(3);
        await page.unroute(startRoute);

        // Analysed: each row says its duration, loudness, true peak and format; none says Processing any more.
        const tree = page.getByRole('list', { name: 'Files' });
        await expect.poll(() => tree.getByText(/LUFS$/).count(), { timeout: ANALYSIS_MS }).toBe(10);
        expect(await tree.getByText('Processing').count()).toBe(0);
        const facts = (await rowOf(page, 'Track 03.wav').locator('.row-facts').textContent()) ?? '';
        expect(facts).toMatch(/0:02/);
        expect(facts).toMatch(/-?\d+\.\d LUFS/);
        expect(facts).toMatch(/-?\d+\.\d dBTP/);
        expect(facts).toContain('WAV · 48 kHz · 16-bit · stereo');
        const stored = (await boxesOf(api, projectid)).filter((box) => box.object === 'file');
        expect(stored.map((box) => box.name).sort()).toEqual([...names].sort());
        expect(stored.every((box) => box.object === 'file' && box.status === 'ready')).toBe(true);
        if (backend === 'sqlite') await checkLayout(page, 'project-analysed');

        // "Night Drive v2.wav", chosen with Upload files, joins "Night Drive" as its newest version (the server stacks it).
        await page.getByLabel('Upload files', { exact: true }).setInputFiles([{ name: 'Night Drive v2.wav', mimeType: 'audio/wav', buffer: await sineWav(2, 880) }]);
        await expect.poll(() => uploads.getByText('Uploaded.').count(), { timeout: ANALYSIS_MS }).toBe(11);
        {
          const stackToggle = tree.getByRole('button', { name: 'Night Drive', exact: true });
          await stackToggle.waitFor();
          expect(await rowOf(page, 'Night Drive').textContent()).toContain('2 versions');
          await stackToggle.click();
          expect(await stackToggle.getAttribute('aria-expanded')).toBe('true');
          await rowOf(page, 'Night Drive v2.wav').waitFor();
          const all = await boxesOf(api, projectid);
          const stack = all.find((box) => box.object === 'stack' && box.name === 'Night Drive');
          expect(stack?.object === 'stack' && stack.children.map((child) => all.find((box) => box.id === child.id)?.name)).toEqual(['Night Drive.wav', 'Night Drive v2.wav']);
          if (backend === 'sqlite') await checkLayout(page, 'project-stack-open');
        }

        expect(await studio.problems()).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'takes files dropped onto a folder row into that folder, and onto a stack row as its newest version',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, 'dropper@example.com');
      const { page } = studio;
      const api = studio.signedIn.api;
      try {
        const projectid = (await api.POST('/projects', { body: { name: 'Drops' } })).data!.id;
        const folder = (await api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'Mixes' } })).data!;
        const wav = await sineWav(1);
        const first = await uploadAudio(api, projectid, 'Chorus.wav', wav);
        await uploadAudio(api, projectid, 'Chorus louder.wav', wav, first.upload.stackid);
        await studio.open(`/projects/${projectid}`);
        const tree = page.getByRole('list', { name: 'Files' });
        await tree.getByRole('button', { name: 'Mixes', exact: true }).waitFor();
        await tree.getByRole('button', { name: 'Chorus', exact: true }).waitFor();
        const uploads = page.getByRole('region', { name: 'Uploads' });

        const folderRow = `li.tree-row[data-boxid="${folder.id}"]`;
        await dropFiles(page, [{ name: 'Verse.wav', bytes: wav }], folderRow, async () => {
          // While the files are over the row, it is marked, and the page says where they will go.
          await page.locator(`${folderRow}.drop-target`).waitFor();
          expect(await page.locator('.drop-hint').textContent()).toBe('Drop the files to upload them into the folder Mixes.');
        });
        await expect.poll(() => uploads.getByText('Uploaded.').count(), { timeout: ANALYSIS_MS }).toBe(1);
        expect(await page.locator('.drop-target').count()).toBe(0);
        const verse = (await boxesOf(api, projectid)).find((box) => box.object === 'file' && box.name === 'Verse.wav')!;
        const verseStack = (await boxesOf(api, projectid)).find((box) => box.id === verse.parentid)!;
        expect(verseStack.parentid).toBe(folder.id);

        await dropFiles(page, [{ name: 'Chorus final.wav', bytes: wav }], `li.tree-row[data-boxid="${first.upload.stackid}"]`);
        await expect.poll(() => uploads.getByText('Uploaded.').count(), { timeout: ANALYSIS_MS }).toBe(2);
        const all = await boxesOf(api, projectid);
        const chorus = all.find((box) => box.id === first.upload.stackid);
        expect(chorus?.object === 'stack' && chorus.children.map((child) => all.find((box) => box.id === child.id)?.name)).toEqual(['Chorus.wav', 'Chorus louder.wav', 'Chorus final.wav']);

        expect(await studio.problems()).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'organises: New folder, Rename, Move to…, Stack versions, Version name, Move up, Hide, Move to trash and Restore, Sort by, each seen through the API',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, 'organiser@example.com');
      const { page } = studio;
      const api = studio.signedIn.api;
      try {
        const { data: project } = await api.POST('/projects', { body: { name: 'Demos' } });
        const projectid = project!.id;
        const wav = await sineWav(1);
        const a = await uploadAudio(api, projectid, 'A.wav', wav);
        const b = await uploadAudio(api, projectid, 'B.wav', wav);
        const c = await uploadAudio(api, projectid, 'C.wav', wav);
        const box = async (id: string) => (await api.GET('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: id } } })).data!;
        await studio.open(`/projects/${projectid}`);
        await rowOf(page, 'C.wav').waitFor();

        // New folder.
        await page.getByRole('button', { name: 'New folder', exact: true }).click();
        const folderDialog = page.getByRole('dialog', { name: 'New folder' });
        await folderDialog.getByRole('textbox', { name: 'Folder name', exact: true }).fill('Mixes');
        await folderDialog.getByRole('button', { name: 'Create', exact: true }).click();
        await folderDialog.waitFor({ state: 'hidden' });
        await page.getByRole('button', { name: 'Mixes', exact: true }).waitFor();
        const { data: folders } = await api.GET('/projects/{projectid}/folders', { params: { path: { projectid } } });
        const mixes = folders!.find((folder) => folder.name === 'Mixes')!;
        expect(mixes).toBeDefined();

        // Rename: the file takes the name.
        await rowAction(page, 'A.wav', 'Rename');
        const renameDialog = page.getByRole('dialog', { name: 'Rename' });
        await renameDialog.getByRole('textbox', { name: 'Name', exact: true }).fill('Alpha.wav');
        await renameDialog.getByRole('button', { name: 'Rename', exact: true }).click();
        await renameDialog.waitFor({ state: 'hidden' });
        await rowOf(page, 'Alpha.wav').waitFor();
        expect((await box(a.box.id)).name).toBe('Alpha.wav');

        // Move to…: into Mixes; the folder then holds it.
        await rowAction(page, 'Alpha.wav', 'Move to…');
        const moveDialog = page.getByRole('dialog', { name: 'Move to…' });
        await moveDialog.getByRole('radio', { name: 'Mixes', exact: true }).check();
        if (backend === 'sqlite') await checkLayout(page, 'project-dialog-move');
        await moveDialog.getByRole('button', { name: 'Move', exact: true }).click();
        await moveDialog.waitFor({ state: 'hidden' });
        await expect.poll(async () => (await box(a.upload.stackid)).parentid).toBe(mixes.id);
        await expect.poll(() => rowOf(page, 'Alpha.wav').count()).toBe(0);
        await page.getByRole('button', { name: 'Mixes', exact: true }).click();
        await rowOf(page, 'Alpha.wav').waitFor();

        // Stack versions: B and C become one stack, B first.
        await page.getByRole('checkbox', { name: 'Select B.wav', exact: true }).check();
        await page.getByRole('checkbox', { name: 'Select C.wav', exact: true }).check();
        await page.getByRole('toolbar', { name: 'Selection' }).getByRole('button', { name: 'Stack versions', exact: true }).click();
        await expect.poll(async () => (await box(b.box.id)).parentid === (await box(c.box.id)).parentid).toBe(true);
        const stackid = (await box(b.box.id)).parentid!;
        const stack = await box(stackid);
        expect(stack.object === 'stack' && stack.children.map((child) => child.id)).toEqual([b.box.id, c.box.id]);
        // The new stack is open on its versions.
        await rowOf(page, 'C.wav').waitFor();
        expect(await page.getByRole('button', { name: 'B', exact: true }).getAttribute('aria-expanded')).toBe('true');

        // Version name.
        await rowAction(page, 'C.wav', 'Version name');
        const versionDialog = page.getByRole('dialog', { name: 'Version name' });
        await versionDialog.getByRole('textbox', { name: 'Version name', exact: true }).fill('v2 louder');
        await versionDialog.getByRole('button', { name: 'Save', exact: true }).click();
        await versionDialog.waitFor({ state: 'hidden' });
        await expect.poll(async () => (await box(c.box.id)).object === 'file' && (await box(c.box.id) as { versionName?: string }).versionName).toBe('v2 louder');

        // Reordering by keyboard: C.wav moves up, and is the older version now.
        const cRow = rowOf(page, 'C.wav');
        await cRow.getByRole('button', { name: 'Actions for C.wav', exact: true }).focus();
        await page.keyboard.press('Enter');
        await cRow.getByRole('button', { name: 'Move up', exact: true }).focus();
        await page.keyboard.press('Enter');
        await expect.poll(async () => {
          const read = await box(stackid);
          return read.object === 'stack' ? read.children.map((child) => child.id) : [];
        }).toEqual([c.box.id, b.box.id]);

        // Hide the folder: the API says hidden, and the page still shows it, marked.
        await rowAction(page, 'Mixes', 'Hide');
        await expect.poll(async () => (await box(mixes.id)) as { hidden?: boolean }).toMatchObject({ hidden: true });
        await rowOf(page, 'Mixes').getByText('Hidden', { exact: true }).waitFor();

        // Move to trash, then Restore from the Trash view.
        await rowAction(page, 'B', 'Move to trash');
        await expect.poll(async () => (await box(stackid)).trashed).toBe(true);
        await expect.poll(() => rowOf(page, 'B').count()).toBe(0);
        await page.getByRole('button', { name: /^Trash/ }).click();
        const trash = page.getByRole('list', { name: 'Trash' });
        const trashed = trash.getByRole('listitem').filter({ hasText: 'B' });
        await trashed.waitFor();
        if (backend === 'sqlite') await checkLayout(page, 'project-trash');
        await trashed.getByRole('button', { name: 'Restore', exact: true }).click();
        await expect.poll(async () => (await box(stackid)).trashed).toBe(false);
        expect((await box(b.box.id)).trashed).toBe(false);
        await page.getByRole('button', { name: 'Files', exact: true }).click();
        await rowOf(page, 'B').waitFor();

        // Sort by name, descending: saved to the project, and the rows follow.
        await page.getByRole('combobox', { name: 'Sort by' }).selectOption('name');
        await page.getByRole('combobox', { name: 'Order' }).selectOption('descending');
        await expect.poll(async () => (await api.GET('/projects/{projectid}', { params: { path: { projectid } } })).data?.sortBy).toEqual({ criterion: 'name', ascending: false });
        await page.reload();
        await page.locator('#studio[data-state="ready"]').waitFor();
        expect(await page.getByRole('combobox', { name: 'Sort by' }).inputValue()).toBe('name');

        expect(await studio.problems()).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'plays a file with its waveform, switches A/B between versions at the same moment, and opens a deep link ready at its t',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, 'listener@example.com');
      const { page } = studio;
      const api = studio.signedIn.api;
      try {
        const { data: project } = await api.POST('/projects', { body: { name: 'Mixes' } });
        const projectid = project!.id;
        const v1 = await uploadAudio(api, projectid, 'Song.wav', await sineWav(10, 440));
        const v2 = await uploadAudio(api, projectid, 'Song louder.wav', await sineWav(10, 660), v1.upload.stackid);
        await api.POST('/projects/{projectid}/files/{fileid}', { params: { path: { projectid, fileid: v2.box.id } }, body: { versionName: 'louder' } });
        for (const file of [v1, v2]) expect((await api.waitUntilReady({ projectid, fileid: file.box.id }, { timeoutMs: ANALYSIS_MS, intervalMs: 200 })).data?.status).toBe('ready');

        // A deep link opens the stack, shows the file's row and waits at t for the listener's click.
        await studio.open(`/projects/${projectid}?file=${v1.box.id}&t=5`);
        const row = page.locator(`#row-${v1.box.id}`);
        await row.waitFor();
        expect(await row.getAttribute('class')).toContain('highlighted');
        const player = page.getByRole('region', { name: 'Player' });
        await player.locator('.waveform[data-drawn="true"]').waitFor();
        await expect.poll(async () => Math.round((await audioState(page)).currentTime)).toBe(5);
        expect((await audioState(page)).paused).toBe(true);
        await player.getByRole('button', { name: 'Play', exact: true }).click();
        const playing = await waitForAudio(page, 'play on past 5.5 s', playingPast, 5.5);
        expect(playing.versionId).toBe(v1.box.id);

        // A/B: the other version, at the same moment, playing on.
        await player.getByRole('radiogroup', { name: 'Version' }).getByRole('radio', { name: /louder/ }).check();
        await expect.poll(async () => (await audioState(page)).versionId).toBe(v2.box.id);
        const switched = await waitForAudio(page, 'play on past the moment of the switch', playingPast, playing.currentTime);
        expect(switched.paused).toBe(false);
        if (backend === 'sqlite') await checkLayout(page, 'project-playing');

        // Play from a row starts that file from its start.
        await page.getByRole('button', { name: 'Play Song.wav', exact: true }).click();
        await expect.poll(async () => (await audioState(page)).versionId).toBe(v1.box.id);
        await waitForAudio(page, 'play on from the start', playingPast, 0.3);
        expect((await audioState(page)).currentTime).toBeLessThan(5);

        expect(await studio.problems()).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );
  it(
    'cancels an upload under way (its file goes) and retries one that failed',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, 'canceller@example.com');
      const { page } = studio;
      const api = studio.signedIn.api;
      try {
        const { data: project } = await api.POST('/projects', { body: { name: 'Takes' } });
        const projectid = project!.id;
        await studio.open(`/projects/${projectid}`);
        const uploads = page.getByRole('region', { name: 'Uploads' });
        const bytes = await sineWav(1);

        // Held on its way, then cancelled: said so, and no file of that name stays in the project.
        const bytesRoute = '**/api/v1/projects/*/tus**';
        let seen!: () => void;
        const arrived = new Promise<void>((resolve) => (seen = resolve));
        await page.route(bytesRoute, async (route) => {
          seen();
          await new Promise(() => {});
          await route.continue();
        });
        await page.getByLabel('Upload files', { exact: true }).setInputFiles([{ name: 'Held.wav', mimeType: 'audio/wav', buffer: bytes }]);
        await arrived;
        await uploads.getByRole('button', { name: 'Cancel Held.wav', exact: true }).click();
        await uploads.getByText('Cancelled.').waitFor();
        await expect.poll(async () => (await boxesOf(api, projectid)).filter((box) => box.object === 'file' && box.name === 'Held.wav').length).toBe(0);
        await page.unroute(bytesRoute);

        // An upload the server refuses (a problem tus does not retry: 413) fails with the problem's detail; Retry sends
        // the file again, and it lands.
        const refusal = { type: 'https://audio-share.example/problems/storage-quota-exceeded', title: 'Storage quota exceeded', status: 413, detail: 'This upload would go over your storage quota.' };
        await page.route('**/api/v1/projects/*/tus', (route) => route.fulfill({ status: 413, contentType: 'application/problem+json', body: JSON.stringify(refusal) }), { times: 1 });
        await page.getByLabel('Upload files', { exact: true }).setInputFiles([{ name: 'Flaky.wav', mimeType: 'audio/wav', buffer: bytes }]);
        await uploads.getByRole('alert').filter({ hasText: refusal.detail }).waitFor();
        expect((await boxesOf(api, projectid)).filter((box) => box.object === 'file' && box.name === 'Flaky.wav')).toEqual([]);
        await uploads.getByRole('button', { name: 'Retry Flaky.wav', exact: true }).click();
        await uploads.getByText('Uploaded.').waitFor();
        await expect.poll(async () => (await boxesOf(api, projectid)).filter((box) => box.object === 'file' && box.name === 'Flaky.wav').length).toBe(1);

        // The refusal made on purpose is the one failed load the browser reports.
        expect((await studio.problems()).filter((problem) => !/status of 413\b/.test(problem))).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'draws a project of 700 boxes a window at a time: a deep link far down finds its row, a row opening its actions pushes the next down, the end is reached',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, 'archivist@example.com');
      const { page } = studio;
      try {
        const { store } = t.server.ctx;
        const user = (await store.users.findByEmail('archivist@example.com'))!;
        // 5 folders, 10 stacks of three versions, 277 tracks and one loose file: 293 rows at the top level.
        const { projectId, rows } = await makeBigProject(store, user.id, 700, await analysedTake(), { folders: 5, stacks: 10 });
        expect(rows).toBe(293);
        await studio.open(`/projects/${projectId}`);
        const list = page.getByRole('list', { name: 'Files' });
        const items = list.getByRole('listitem');
        await items.first().waitFor();
        const drawn = await items.count();
        expect(drawn).toBeGreaterThan(5);
        expect(drawn).toBeLessThan(100);
        expect(await items.first().getAttribute('aria-setsize')).toBe('293');
        expect(await page.getByRole('checkbox', { name: 'Select Track 00200.wav', exact: true }).count()).toBe(0);
        if (backend === 'sqlite') await checkLayout(page, 'project-windowed');

        // A row that opens its actions grows in place: the window measures it, and the next row moves down with it.
        expect(await list.getByRole('checkbox').first().getAttribute('aria-label')).toBe('Select Session 1');
        const first = rowOf(page, 'Session 1');
        const before = (await first.boundingBox())!;
        await first.getByRole('button', { name: 'Actions for Session 1', exact: true }).click();
        await first.getByRole('button', { name: 'Rename', exact: true }).waitFor();
        const [opened, next] = await Promise.all([first.boundingBox(), rowOf(page, 'Session 2').boundingBox()]);
        expect(opened!.height).toBeGreaterThan(before.height + 20);
        expect(Math.abs(next!.y - (opened!.y + opened!.height))).toBeLessThan(2);
        await page.keyboard.press('Escape');

        // A deep link to a row far below the window draws it, in view, highlighted.
        const file = (await store.boxes.listProject(projectId, 'file')).find((box) => box.name === 'Track 00200.wav')!;
        await studio.open(`/projects/${projectId}?file=${file.id}&t=0`);
        const target = rowOf(page, 'Track 00200.wav');
        await target.waitFor();
        await expect.poll(() => target.getAttribute('class')).toContain('highlighted');
        const box = (await target.boundingBox())!;
        const height = page.viewportSize()!.height;
        expect(box.y).toBeGreaterThanOrEqual(0);
        expect(box.y + box.height).toBeLessThanOrEqual(height);

        // Scrolled to the end, the last row is drawn, where the list ends.
        await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
        await rowOf(page, 'Loose file.wav').waitFor();
        expect(await items.last().getAttribute('aria-posinset')).toBe('293');
        const gap = await page.evaluate(() => {
          const list = document.querySelector('ul[aria-label="Files"]')!;
          return list.getBoundingClientRect().bottom - list.lastElementChild!.getBoundingClientRect().bottom;
        });
        expect(Math.abs(gap)).toBeLessThan(2);

        // The deep link readies the file to play: its bytes and peaks were never stored (the boxes were made through
        // the store), so those two reads fail, and only those.
        expect((await studio.problems()).filter((problem) => !problem.includes(`/download/${file.id}?`))).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );

  it(
    'resumes an upload whose connection was cut mid-file, and stores the very bytes sent (sha256)',
    async () => {
      const studio = await studioPage(chromium.browser, t.server, 'resumer@example.com');
      const { page } = studio;
      const api = studio.signedIn.api;
      try {
        const { data: project } = await api.POST('/projects', { body: { name: 'Long takes' } });
        const projectid = project!.id;
        await studio.open(`/projects/${projectid}`);
        // Over one PATCH's worth (8 MB): the first part arrives, the second is cut once, then resumed from the server's offset.
        // From a file on disk: the browser reads it itself, instead of 11 MB through the test's connection to it.
        const path = await makeAudioFile('Long take.wav', ['-f', 'lavfi', '-i', 'sine=frequency=220:sample_rate=48000:duration=60', '-ac', '2', '-c:a', 'pcm_s16le']);
        const bytes = readFileSync(path);
        let patches = 0;
        let cut = 0;
        await page.route('**/api/v1/projects/*/tus/**', async (route) => {
          if (route.request().method() === 'PATCH' && ++patches === 2) {
            cut += 1;
            return route.abort('connectionreset');
          }
          return route.continue();
        });
        await page.getByLabel('Upload files', { exact: true }).setInputFiles(path);
        const uploads = page.getByRole('region', { name: 'Uploads' });
        await uploads.getByText('Uploaded.').waitFor({ timeout: ANALYSIS_MS });
        expect(cut).toBe(1);
        expect(patches).toBeGreaterThanOrEqual(3);
        const file = (await boxesOf(api, projectid)).find((box) => box.object === 'file' && box.name === 'Long take.wav')!;
        const { data: download } = await api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid, fileid: file.id } } });
        const stored = Buffer.from(await (await fetch(download!.url)).arrayBuffer());
        const sha = (data: Buffer) => createHash('sha256').update(data).digest('hex');
        expect(sha(stored)).toBe(sha(bytes));

        // The connection cut on purpose is the one failed load the browser reports.
        expect((await studio.problems()).filter((problem) => !/net::ERR_CONNECTION_RESET/.test(problem))).toEqual([]);
        expect(studio.foreign).toEqual([]);
      } finally {
        await studio.close();
      }
    },
    BROWSER_TEST_MS,
  );
});
