/**
 * The README's "A first call" runs: examples/first-upload.ts, as a partner
 * would start it (a child process with TOKEN and API_URL), against a real
 * server with audio processing on, on real audio made by ffmpeg. Its player
 * link then opens, in Chromium, on a page that lists the uploaded track,
 * not "No tracks yet".
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeAudioFile } from '../server/testing/audio.ts';
import { useBrowser } from '../server/testing/browser.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { freePort } from '../server/testing/ports.ts';

const root = resolve(import.meta.dirname, '..');

/** Runs a command to its end; resolves with its exit code and what it printed. */
function run(command: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

describe('the README first call (examples/first-upload.ts)', () => {
  const t = useTestServer('sqlite', { PROCESSING: 'in-process', JOB_POLL_MS: '50' });
  const chromium = useBrowser();
  const node = process.execPath;

  it('creates a player, uploads a file, waits until it is ready, and prints a link whose page lists the track', async () => {
    const wav = await makeAudioFile('first-mix.wav', ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000:duration=3', '-ac', '2', '-c:a', 'pcm_s16le']);
    const token = await t.server.token('partner@example.com');
    const result = await run(node, ['examples/first-upload.ts', wav], { TOKEN: token, API_URL: t.server.apiUrl });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/Uploading first-mix\.wav: 100 %/);
    expect(result.stdout).toMatch(/Ready: first-mix\.wav, 3 s, -?\d+(\.\d+)? LUFS/);
    const link = /Open the player: (\S+)/.exec(result.stdout)?.[1];
    expect(link).toMatch(new RegExp(`^${t.server.address}/p/`));

    const page = await chromium.browser.newPage();
    try {
      const response = await page.goto(link!);
      expect(response?.status()).toBe(200);
      // The page draws itself from the API once its script has run.
      await page.locator('main[data-state="ready"]').waitFor();
      // The track is its stack, named after the file without its extension.
      await expect(page.getByText('first-mix', { exact: true }).first().isVisible()).resolves.toBe(true);
      expect(await page.getByText('No tracks yet').count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('says in one line that nothing answers at API_URL, and how to set it, when no server is there', async () => {
    const port = await freePort();
    const result = await run(node, ['examples/first-upload.ts', 'mix.wav'], { TOKEN: 'some-token', API_URL: `http://127.0.0.1:${port}/api/v1` });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining(`Nothing answers at http://127.0.0.1:${port}/api/v1`)]);
    expect(result.stderr).toMatch(/set API_URL/);
  });

  it('says how to call it when the token or the file is missing', async () => {
    const result = await run(node, ['examples/first-upload.ts'], { TOKEN: '', API_URL: t.server.apiUrl });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/Usage: TOKEN=<bearer token>/);
  });
});
