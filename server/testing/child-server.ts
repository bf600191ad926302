/**
 * The real server in a child process, as `npm start` runs it, for the tests
 * that kill it (SIGKILL) and start it again on the same data.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { until } from './until.ts';
import { openStore } from '../repositories.ts';
import type { TestDatabase } from './databases.ts';
import { freePort } from './ports.ts';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** `node server/main.ts`, as npm start runs it; ready once /healthz answers. */
export async function startServer(env: Record<string, string>): Promise<{ child: ChildProcess; output: () => string; exited: Promise<unknown> }> {
  const child = spawn(process.execPath, ['server/main.ts'], { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (chunk) => (output += chunk));
  child.stderr!.on('data', (chunk) => (output += chunk));
  const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve(signal ?? code)));
  let gone = false;
  void exited.then(() => (gone = true));
  await until(
    async () => {
      if (gone) throw new Error(`The server exited while starting:\n${output}`);
      try {
        return (await fetch(`http://127.0.0.1:${env.PORT}/healthz`)).ok;
      } catch (error) {
        if ((error as { cause?: { code?: string } }).cause?.code === 'ECONNREFUSED') return false; // not listening yet
        throw error;
      }
    },
    'the server to start',
    60_000,
  );
  return { child, output: () => output, exited };
}


/**
 * What a child server on `database` needs: a token of `email` minted in its
 * store before it starts, a free port, and the settings of a bare
 * environment (no settings of this process leak in), plus `extra`.
 */
export async function childServerSetup(database: TestDatabase, email: string, extra: Record<string, string> = {}): Promise<{ token: string; port: number; env: Record<string, string> }> {
  const store = await openStore(database);
  const user = await store.users.findOrCreate(email, Date.now());
  const token = (await store.tokens.create(user.id, 'crash test', Date.now())).secret;
  await store.close();
  const port = await freePort();
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '',
    DATA_DIR: database.dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    PUBLIC_URL: `http://127.0.0.1:${port}`,
    PROCESSING: 'external',
    LOG_LEVEL: 'warn',
    ...(database.databaseUrl ? { DATABASE_URL: database.databaseUrl } : {}),
    ...extra,
  };
  return { token, port, env };
}
