/**
 * The README's "OAuth for partners" runs: examples/oauth-partner.ts, as a
 * partner would start it (a child process), against a real server; the
 * person opens the URL it prints, signed in, in Chromium, and clicks Allow.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useBrowser } from '../server/testing/browser.ts';
import { useTestServer } from '../server/testing/harness.ts';
import { signIn } from '../server/testing/sessions.ts';

const root = resolve(import.meta.dirname, '..');

describe('the README OAuth example (examples/oauth-partner.ts)', () => {
  const t = useTestServer('sqlite', { OAUTH_DYNAMIC_REGISTRATION: 'true' });
  const chromium = useBrowser();

  it('registers, sends the person to the consent page, exchanges the code, calls the API and refreshes', async () => {
    const person = await signIn(t.server, 'oauth-example@example.com');
    const child = spawn(process.execPath, ['examples/oauth-partner.ts'], { cwd: root, env: { ...process.env, SERVER: t.server.address }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk));
    const url = await new Promise<string>((found) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk;
        const match = /Open this in your browser: (\S+)/.exec(stdout);
        if (match) found(match[1]);
      });
    });
    const ended = new Promise<number | null>((done) => child.once('close', done));
    const context = await chromium.browser.newContext();
    try {
      await context.addCookies([{ name: person.cookie.split('=')[0], value: person.cookie.split('=')[1], url: t.server.address }]);
      const page = await context.newPage();
      await page.goto(url);
      await page.getByRole('heading', { name: 'Allow Example partner app to:' }).waitFor();
      await page.getByRole('button', { name: 'Allow', exact: true }).click();
      expect(await ended).toBe(0);
    } finally {
      await context.close();
    }
    expect(stderr).toBe('');
    expect(stdout).toContain('Connected with projects:read: 0 projects');
    expect(stdout).toContain('Refreshed: a new refresh token (true)');
  }, 90_000);
});
