/**
 * One signing secret across processes: the first process on a database
 * records its secret's fingerprint (never the secret), the same secret
 * starts again, and another one is refused, by the library and by
 * `npm start` and `npm run worker` with exit code 2.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { createContext } from '../open-context.ts';
import { openStore } from '../repositories.ts';
import type { Context } from '../context.ts';
import { backends, createTestDatabase, type TestDatabase } from '../testing/databases.ts';
import { SigningSecretMismatchError, signingSecretFingerprint } from './secret-fingerprint.ts';

const root = resolve(import.meta.dirname, '../..');
const secretA = 'a'.repeat(20) + '-first-secret-of-this-deployment';
const secretB = 'b'.repeat(20) + '-another-secret-altogether-here';

/** `node <entry>` with this environment: what it printed on stderr, and when it exits. */
function startProcess(entry: string, env: Record<string, string | undefined>) {
  const child = spawn(process.execPath, [entry], { cwd: root, env: { ...process.env, DATABASE_URL: '', ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  const waiters: (() => void)[] = [];
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
    for (const waiter of waiters) waiter();
  });
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    exited,
    stderr: () => stderr,
    /** Resolves once stderr has a match for `pattern`. */
    printed: (pattern: RegExp) =>
      new Promise<void>((found) => {
        const check = () => pattern.test(stderr) && found();
        waiters.push(check);
        check();
      }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

describe.each(backends)('one signing secret on %s', (backend) => {
  let database: TestDatabase;
  const opened: Context[] = [];
  beforeEach(async (context) => {
    (context.task.meta as { store?: string }).store = backend;
    database = await createTestDatabase(backend);
  });
  afterEach(async () => {
    for (const ctx of opened.splice(0)) await ctx.store.close();
    await database.drop();
  });

  const env = (secret: string) => ({ DATA_DIR: database.dataDir, DATABASE_URL: database.databaseUrl, SIGNING_SECRET: secret, LOG_LEVEL: 'silent', PROCESSING: 'external' });
  const open = async (secret: string) => {
    const ctx = await createContext(loadConfig(env(secret)));
    opened.push(ctx);
    return ctx;
  };

  it('records the fingerprint of the first secret, never the secret, and lets the same secret start again', async () => {
    const first = await open(secretA);
    const rows = await first.store.db.query<{ name: string; value: string }>('SELECT name, value FROM deployment_settings');
    expect(rows).toEqual([{ name: 'signing_secret_fingerprint', value: signingSecretFingerprint(Buffer.from(secretA)) }]);
    expect(rows[0].value).toMatch(/^[0-9a-f]{64}$/);
    for (const form of [secretA, Buffer.from(secretA).toString('hex'), Buffer.from(secretA).toString('base64')]) expect(rows[0].value).not.toContain(form);
    // A second process with the same secret, while the first runs.
    await expect(open(secretA)).resolves.toBeDefined();
  });

  it('refuses another secret, saying so, and leaves the recorded one as it was', async () => {
    await open(secretA);
    const error = await open(secretB).catch((error: unknown) => error);
    expect(error).toBeInstanceOf(SigningSecretMismatchError);
    expect((error as Error).message).toMatch(/^SIGNING_SECRET does not match the one the servers and workers on this database use .*Give this one the same SIGNING_SECRET/);
    const store = await openStore(database);
    try {
      expect(await store.db.query('SELECT value FROM deployment_settings')).toEqual([{ value: signingSecretFingerprint(Buffer.from(secretA)) }]);
    } finally {
      await store.close();
    }
  });

  it('lets exactly one of two servers starting at once on a fresh database win', async () => {
    // Two processes, as in a deployment: two connections of one process cannot migrate SQLite at once.
    const servers = [secretA, secretB].map((secret) => startProcess('server/main.ts', { ...env(secret), PORT: '0' }));
    try {
      const outcomes = await Promise.all(servers.map((server) => Promise.race([server.exited.then((code) => ({ code })), server.printed(/is listening at/).then(() => 'listening' as const)])));
      expect(outcomes.filter((outcome) => outcome === 'listening')).toHaveLength(1);
      expect(outcomes.filter((outcome) => outcome !== 'listening')).toEqual([{ code: 2 }]);
    } finally {
      for (const server of servers) await server.stop();
    }
  });

  it('stops npm start and npm run worker with another secret: the message on stderr, exit code 2', async () => {
    await open(secretA);
    for (const entry of ['server/main.ts', 'server/worker-main.ts']) {
      const child = startProcess(entry, { ...env(secretB), PORT: '0' });
      expect(await child.exited, `${entry}: ${child.stderr()}`).toBe(2);
      expect(child.stderr(), entry).toMatch(/^SIGNING_SECRET does not match the one the servers and workers on this database use/);
    }
  });
});
