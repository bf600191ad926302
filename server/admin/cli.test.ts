import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useTestServer } from '../testing/harness.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

describe('admin CLI, while the server runs', () => {
  const t = useTestServer('sqlite');
  const admin = (...args: string[]) =>
    run('npm', ['run', '--silent', 'admin', '--', ...args], { cwd: root, env: { ...process.env, DATA_DIR: t.server.ctx.config.dataDir, DATABASE_URL: '' } });

  it('creates a user and prints a token, alone, that the running server accepts; lists and revokes it', async () => {
    const { stdout } = await admin('token', 'create', '--email', 'Cli@Example.com', '--label', 'ci');
    expect(stdout).toMatch(/^as_[A-Za-z0-9_-]{43}\n$/);
    const token = stdout.trim();
    const me = await t.fetch('/me', { token });
    expect(await me.json()).toMatchObject({ email: 'cli@example.com' });

    const listed = await admin('token', 'list', '--email', 'cli@example.com');
    const [id, email, , state, label] = listed.stdout.trim().split('\t');
    expect([email, state, label]).toEqual(['cli@example.com', 'active', 'ci']);
    expect(listed.stdout).not.toContain(token);

    await admin('token', 'revoke', id);
    expect((await t.fetch('/me', { token })).status).toBe(401);
    await expect(admin('token', 'revoke', id)).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('no active token') });
  });

  it('explains its usage when the command is wrong', async () => {
    await expect(admin('token', 'create')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('needs --email') });
    await expect(admin('users')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('Usage') });
  });
});
