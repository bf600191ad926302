/** The bench user and what it signs in with: a token minted by the admin CLI, a password, a session; and a seeded project. */
import { spawn } from 'node:child_process';
import { createApiClient } from '../../generated/client.ts';
import { hashPassword } from '../../server/auth/passwords.ts';
import { openStore } from '../../server/repositories.ts';
import { serverArgs, serverNode, type Started } from './servers.ts';

/** A token for the bench user, minted by the admin CLI in the server's data folder, as a newcomer would. */
export function benchToken(server: Started): Promise<string> {
  return new Promise<string>((done, fail) => {
    const admin = spawn(serverNode, [...serverArgs('server/admin/cli.ts'), 'token', 'create', '--email', 'bench@example.com'], { cwd: server.tree, env: { ...process.env, DATA_DIR: server.dataDir, DATABASE_URL: server.databaseUrl } });
    let out = '';
    admin.stdout.on('data', (d) => (out += d));
    admin.on('exit', (code) => (code === 0 ? done(out.trim()) : fail(new Error('admin failed'))));
  });
}

export async function seed(server: Started) {
  const token = await benchToken(server);
  const api = createApiClient({ baseUrl: server.url + '/api/v1', token });
  const { data: project } = await api.POST('/projects', { body: { name: 'Bench' } });
  // 500 uploads make 500 stacks holding 500 files: 1,000 boxes.
  for (let i = 0; i < 500; i++) {
    await api.POST('/projects/{projectid}/files', { params: { path: { projectid: project!.id } }, body: { name: `take-${i}.wav`, mimeType: 'audio/wav', size: 1000 } });
  }
  const { data: player } = await api.POST('/players', { body: { name: 'Bench', projectid: project!.id } });
  return { api, token, projectid: project!.id, playerid: player!.id };
}

/** Gives the bench user a password through the store, as the setup page would give one; answers it. */
export async function benchPassword(server: Started): Promise<string> {
  const password = 'a bench passphrase nobody guesses';
  const store = await openStore({ dataDir: server.dataDir });
  const user = (await store.users.findByEmail('bench@example.com'))!;
  await store.users.setPasswordHash(user.id, await hashPassword(password));
  await store.close();
  return password;
}

/** A session cookie of the bench user, from a password sign-in. */
export async function benchSession(server: Started): Promise<string> {
  const password = await benchPassword(server);
  const response = await fetch(`${server.url}/api/v1/auth/signin`, { method: 'POST', headers: { 'Content-Type': 'application/json', Origin: server.url }, body: JSON.stringify({ email: 'bench@example.com', password }) });
  if (response.status !== 200) throw new Error(`sign-in answered ${response.status}`);
  return response.headers.getSetCookie()[0].split(';')[0];
}
