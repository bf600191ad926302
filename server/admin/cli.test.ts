import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { type Backend, backends, createTestDatabase, type TestDatabase } from '../testing/databases.ts';
import { useTestServer } from '../testing/harness.ts';
import { adminTokenCommand, shellQuote, sqliteFile } from './admin-command.ts';
import { hashToken } from '../resources/account/token-repository.ts';
import { ALL_SCOPES, tokenJson } from '../resources/account/token-service.ts';
import { parseDuration } from './cli.ts';

const run = promisify(execFile);
const root = resolve(import.meta.dirname, '../..');

/** The environment of a fresh shell: none of the store settings of the process running the tests. */
function bareEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.DATA_DIR;
  delete env.DATABASE_URL;
  return env;
}

/** The URL of a test database with a password in it. The local server trusts loopback, so the password is never asked for. */
function withPassword(databaseUrl: string, password: string): string {
  const url = new URL(databaseUrl);
  url.password = password;
  return url.toString();
}

describe.each(backends)('admin CLI on %s, while the server runs', (backend) => {
  const t = useTestServer(backend);
  const databaseUrl = () => (t.server.ctx.config.databaseUrl ? withPassword(t.server.ctx.config.databaseUrl, 'hunter2') : '');
  const admin = (...args: string[]) =>
    run('npm', ['run', '--silent', 'admin', '--', ...args], { cwd: root, env: { ...bareEnv(), DATA_DIR: t.server.ctx.config.dataDir, DATABASE_URL: databaseUrl() } });

  it('prints a setup link while the database has no account, and refuses once it has one', async () => {
    const { stdout, stderr } = await admin('setup-link');
    expect(stdout).toMatch(/^http\S+\/setup\?token=[A-Za-z0-9_-]{43}\n$/);
    expect(stderr).toContain('first account');
    const secret = /token=(\S+)/.exec(stdout)![1];
    expect(await t.server.ctx.store.oneTimeLinks.peek('setup', secret, Date.now())).toMatchObject({ kind: 'setup' });
    await t.server.ctx.store.users.findOrCreate('first@example.com', Date.now());
    await expect(admin('setup-link')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('has accounts already') });
  });

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

  it('mints tokens with every scope, and with --expires-in an expiry', async () => {
    const started = Date.now();
    const { stdout, stderr } = await admin('token', 'create', '--email', 'expiring@example.com', '--expires-in', '2d');
    expect(stderr).toMatch(/valid until \d{4}-/);
    const token = stdout.trim();
    expect((await t.fetch('/me', { token })).status).toBe(200);
    const user = (await t.server.ctx.store.users.findByEmail('expiring@example.com'))!;
    const [made] = await t.server.ctx.store.tokens.listActiveOf(user.id);
    expect(tokenJson(made).scopes).toEqual([...ALL_SCOPES]);
    expect(made.timeExpires! - started).toBeGreaterThanOrEqual(2 * 86_400_000);
    expect(made.timeExpires! - Date.now()).toBeLessThanOrEqual(2 * 86_400_000);
    await admin('token', 'create', '--email', 'expiring@example.com');
    expect((await t.server.ctx.store.tokens.listActiveOf(user.id)).map((item) => item.timeExpires)).toContain(null);
    await expect(admin('token', 'create', '--email', 'expiring@example.com', '--expires-in', 'soon')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('--expires-in') });
  });

  it('prints an invitation link, as an administrator with --admin, and refuses an address that has an account', async () => {
    const { stdout, stderr } = await admin('invite', '--email', 'Invited@Example.com', '--admin');
    expect(stdout).toMatch(/^http\S+\/signup\?invite=[A-Za-z0-9_-]{43}\n$/);
    expect(stderr).toContain('Invited invited@example.com as an administrator');
    const secret = /invite=(\S+)/.exec(stdout)![1];
    const [row] = await t.server.ctx.store.db.query<{ kind: string; email: string; data: string }>('SELECT kind, email, data FROM one_time_links WHERE secret_hash = $1', [hashToken(secret)]);
    expect({ ...row, data: JSON.parse(row.data) }).toEqual({ kind: 'invitation', email: 'invited@example.com', data: { admin: true } });
    await t.server.ctx.store.users.findOrCreate('member@example.com', Date.now());
    await expect(admin('invite', '--email', 'member@example.com')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('already an account') });
    await expect(admin('invite')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('needs --email') });
  });

  it('disables an account (ending its sessions), enables it, and makes it an administrator', async () => {
    const store = t.server.ctx.store;
    const user = await store.users.findOrCreate('managed@example.com', Date.now());
    await store.sessions.create(user.id, 'password', { userAgent: null, address: null }, Date.now());
    const disabled = await admin('user', 'disable', '--email', 'Managed@example.com');
    expect(disabled.stderr).toContain('Disabled managed@example.com');
    expect(await store.userAdmin.get(user.id)).toMatchObject({ disabled: true, admin: false });
    expect(await store.db.query('SELECT id FROM sessions WHERE user_id = $1', [user.id])).toEqual([]);
    await admin('user', 'enable', '--email', 'managed@example.com');
    await admin('user', 'make-admin', '--email', 'managed@example.com');
    expect(await store.userAdmin.get(user.id)).toMatchObject({ disabled: false, admin: true });
    await expect(admin('user', 'disable', '--email', 'nobody@example.com')).rejects.toMatchObject({ code: 1, stderr: expect.stringContaining('no account nobody@example.com') });
    await expect(admin('user', 'promote', '--email', 'managed@example.com')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('Usage') });
  });

  it('says on stderr which database it wrote to, without the password of DATABASE_URL', async () => {
    const { stdout, stderr } = await admin('token', 'create', '--email', 'where@example.com');
    expect(stdout).toMatch(/^as_[A-Za-z0-9_-]{43}\n$/);
    const config = t.server.ctx.config;
    if (backend === 'sqlite') {
      // The very file the server opened: a name that drifted from the store's would fail here.
      expect(existsSync(sqliteFile(config.dataDir))).toBe(true);
      expect(stderr).toContain(`Created a token for where@example.com in SQLite ${sqliteFile(config.dataDir)}.`);
    } else {
      const url = new URL(config.databaseUrl!);
      expect(stderr).toContain(`Created a token for where@example.com in PostgreSQL postgres://${url.username}@${url.host}${url.pathname}.`);
      expect(stderr).not.toContain('hunter2');
    }
  });

  it('explains its usage when the command is wrong', async () => {
    await expect(admin('token', 'create')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('needs --email') });
    await expect(admin('users')).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('Usage') });
  });
});

/**
 * `node server/main.ts` (what `npm start` runs) with this environment, until its banner is out.
 * Its stderr, or with `logs`, its stdout and stderr through one pipe, in the order it wrote them, as a terminal shows them.
 */
async function startMain(env: NodeJS.ProcessEnv, { logs = false } = {}): Promise<{ child: ChildProcess; banner: string[]; waitFor(pattern: RegExp): Promise<string> }> {
  const child = logs
    ? spawn('sh', ['-c', 'exec "$0" server/main.ts 2>&1', process.execPath], { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] })
    : spawn(process.execPath, ['server/main.ts'], { cwd: root, env, stdio: ['ignore', 'ignore', 'pipe'] });
  let text = '';
  const waiters: { pattern: RegExp; found(line: string): void }[] = [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const line = text.split('\n').find((candidate) => waiter.pattern.test(candidate));
      if (line !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.found(line);
      }
    }
  };
  (logs ? child.stdout : child.stderr)?.setEncoding('utf8').on('data', (chunk: string) => {
    text += chunk;
    check();
  });
  /** The first line of output that matches, as soon as it is out; rejects when the server exits first. */
  const waitFor = (pattern: RegExp) =>
    new Promise<string>((found, reject) => {
      waiters.push({ pattern, found });
      child.once('exit', (code) => reject(new Error(`The server exited (${code}) before printing ${pattern}:\n${text}`)));
      check();
    });
  // The banner ends with the line that says where the data is.
  await waitFor(/^ {2}Data: /);
  return { child, banner: text.split('\n'), waitFor };
}

async function stopMain(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGTERM');
  await exited;
}

describe.each(backends)('start banner on %s', (backend: Backend) => {
  let database: TestDatabase | undefined;
  let dataDir: string | undefined;
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child) await stopMain(child);
    await database?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints the address first, then the admin command of this configuration, which mints a token this server accepts', async () => {
    let env: NodeJS.ProcessEnv;
    let databaseUrl: string | undefined;
    if (backend === 'sqlite') {
      // A folder a shell would split or choke on, unless the command quotes it.
      dataDir = mkdtempSync(join(tmpdir(), "audio share 'banner' "));
      env = { ...bareEnv(), DATA_DIR: dataDir };
    } else {
      database = await createTestDatabase('postgres');
      databaseUrl = withPassword(database.databaseUrl!, 'hunter2');
      env = { ...bareEnv(), DATA_DIR: database.dataDir, DATABASE_URL: databaseUrl };
    }
    const started = await startMain({ ...env, PORT: '0', LOG_LEVEL: 'silent', PROCESSING: 'external' });
    child = started.child;
    const [first, setupLine, tokenLine, ...rest] = started.banner;

    const address = /^Audio Share is listening at (http:\/\/127\.0\.0\.1:\d+) /.exec(first)?.[1];
    expect(address, `first line: ${first}`).toBeDefined();
    // The accounts rules: on a database with no account, "right after its address, a one-time link".
    expect(setupLine).toMatch(/^Create the first account: http:\/\/[^ ]+\/setup\?token=[\w-]{43}$/);
    const command = /^ {2}Token: (.+)$/.exec(tokenLine)?.[1];
    expect(command, `second line: ${tokenLine}`).toBeDefined();
    expect(command).toContain(`DATA_DIR=${shellQuote(env.DATA_DIR!)} `);
    if (databaseUrl) {
      const url = new URL(databaseUrl);
      expect(command).toContain(`DATABASE_URL=postgres://${url.username}@${url.host}${url.pathname} `);
      expect(started.banner.join('\n')).not.toContain('hunter2');
      expect(rest[0]).toContain('password of DATABASE_URL');
    }

    // Without SMTP_URL, the banner says that nothing is mailed, in one line.
    expect(started.banner.filter((line) => line.startsWith('  Mail:'))).toEqual([
      '  Mail:  off (no SMTP_URL): nothing is mailed; invitation links are in the API answers, reset links come from the admin CLI (user reset-link)',
    ]);

    // Run it as printed, from a shell that has none of the server's settings.
    const minted = await run('sh', ['-c', command!], { cwd: root, env: bareEnv() });
    const token = minted.stdout.trim();
    const me = await fetch(`${address}/api/v1/me`, { headers: { Authorization: `Bearer ${token}` } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ email: 'you@example.com' });
  });
});

describe('start banner with logs on, on sqlite', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'audio-share-banner-'));
  let child: ChildProcess | undefined;
  afterAll(async () => {
    if (child) await stopMain(child);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('comes before the log lines written while starting (the audio worker says it started), which follow it, whole', async () => {
    const started = await startMain({ ...bareEnv(), DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', PROCESSING: 'in-process' }, { logs: true });
    child = started.child;
    const lines = started.banner.filter((line) => line !== '');
    expect(lines[0]).toMatch(/^Audio Share is listening at http:\/\/127\.0\.0\.1:\d+ /);
    // The lines held back come out after it, whole.
    const logged = await started.waitFor(/"audio worker started"/);
    expect(JSON.parse(logged)).toMatchObject({ level: 'info', message: 'audio worker started' });
    const address = /listening at (\S+) /.exec(lines[0])![1];
    expect((await fetch(`${address}/healthz`)).status).toBe(200);
  });
});

describe('the admin CLI\'s durations', () => {
  it('takes whole minutes, hours and days, and nothing else', () => {
    expect([parseDuration('90m'), parseDuration('12h'), parseDuration('30d')]).toEqual([90 * 60_000, 12 * 3_600_000, 30 * 86_400_000]);
    for (const text of ['', '0d', '1.5d', '30', 'd', '30 d', '-1d', '1w', '10000000d']) expect(parseDuration(text), text).toBeUndefined();
  });
});

describe('the admin command of a configuration', () => {
  it('needs no prefix for the defaults, and quotes what a shell would split', () => {
    const defaults = { dataDir: resolve(root, 'data'), databaseUrl: undefined };
    expect(adminTokenCommand(defaults, {}).command).toBe('npm run --silent admin -- token create --email you@example.com');
    expect(adminTokenCommand({ dataDir: '/srv/my audio', databaseUrl: undefined }, { DATA_DIR: '/srv/my audio' }).command).toBe(
      "DATA_DIR='/srv/my audio' npm run --silent admin -- token create --email you@example.com",
    );
    // Started from another directory without DATA_DIR: the data is not where npm run admin looks by default.
    expect(adminTokenCommand({ dataDir: '/home/me/data', databaseUrl: undefined }, {}).command).toMatch(/^DATA_DIR=\/home\/me\/data npm run/);
    expect(adminTokenCommand({ dataDir: resolve(root, 'data'), databaseUrl: 'postgres://audio@db:5432/audio' }, {})).toEqual({
      command: 'DATABASE_URL=postgres://audio@db:5432/audio npm run --silent admin -- token create --email you@example.com',
      passwordHidden: false,
    });
  });
});
