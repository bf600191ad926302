/**
 * The accounts rules: "Collaborator access by email is granted only to an account
 * whose email is verified … Otherwise, with open registration, anyone
 * could sign up as `client@label.com` and inherit what was shared with that
 * address." An account with the collaborator's address, unverified, gets
 * nothing of the shared player's project; the same account, once verified,
 * gets the role it was invited with.
 */
import { describe, expect, it } from 'vitest';
import { createApiClient } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { useTestServer } from '../../testing/harness.ts';
import { newId } from '../../lib/ids.ts';

describe.each(backends)('collaborator access by a verified email only, on %s', (backend) => {
  const t = useTestServer(backend);

  /** An account as sign-up makes it: the address not verified yet. Answers its id and a client with a token of its own. */
  async function unverifiedAccount(email: string) {
    const store = t.server.ctx.store;
    const id = newId('usr');
    await store.db.execute('INSERT INTO users (id, email, email_verified, time_created) VALUES ($1, $2, 0, $3)', [id, email, Date.now()]);
    const { secret } = await store.tokens.create(id, 'test', Date.now());
    return { id, api: createApiClient({ baseUrl: t.server.apiUrl, token: secret }) };
  }

  it('gives an unverified account with the invited address nothing, and the role it was invited with once verified', async () => {
    const owner = await t.as(`owner-${backend}@example.com`);
    const email = `client-${backend}@label.com`;
    const { data: player } = await owner.api.POST('/players', { body: { name: 'For the client', public: false, collaborators: [{ email, role: 'editor' }] } });
    const path = { params: { path: { playerid: player!.id } } };
    const project = { params: { path: { projectid: player!.projectid } } };

    const squatter = await unverifiedAccount(email);
    expect((await squatter.api.GET('/players/{playerid}', path)).response.status).toBe(404);
    expect((await squatter.api.GET('/projects/{projectid}', project)).response.status).toBe(404);
    expect((await squatter.api.POST('/players/{playerid}', { ...path, body: { name: 'Taken over' } })).response.status).toBe(404);
    expect((await squatter.api.GET('/projects')).data!.map((item) => item.id)).not.toContain(player!.projectid);
    expect((await squatter.api.GET('/players/{playerid}/view', path)).response.status).not.toBe(200);

    await t.server.ctx.store.db.execute('UPDATE users SET email_verified = 1 WHERE id = $1', [squatter.id]);
    expect((await squatter.api.GET('/players/{playerid}', path)).response.status).toBe(200);
    expect((await squatter.api.GET('/projects')).data!.find((item) => item.id === player!.projectid)).toMatchObject({ role: 'editor' });
    expect((await squatter.api.POST('/players/{playerid}', { ...path, body: { name: 'Renamed by the client' } })).response.status).toBe(200);
    expect((await squatter.api.GET('/players/{playerid}/view', path)).response.status).toBe(200);
  });
});
