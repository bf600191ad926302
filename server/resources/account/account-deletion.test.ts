/**
 * Deleting an account leaves nothing of it: every table of the database is
 * read whole, and no row names the account, its address, its projects or
 * their files; the blob store holds nothing of its projects. Other
 * people's projects it worked in stay whole.
 */
import { describe, expect, it } from 'vitest';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';
import { ALL_PROJECTS_PREFIX, projectBlobPrefix } from '../../blobs/keys.ts';
import { deleteAccount } from './account-deletion.ts';
import { signIn, TEST_PASSWORD } from '../../testing/sessions.ts';
import { onePixelPng } from '../../testing/fixtures.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

describe.each(backends)('deleting an account on %s', (backend) => {
  const t = useTestServer(backend, { WEBHOOK_ALLOW_PRIVATE: 'true' });

  /** Every row of every table, as text, with the table's name. */
  async function everyRow(): Promise<Array<{ table: string; row: string }>> {
    const db = t.server.ctx.store.db;
    const tables =
      db.dialect === 'postgres'
        ? await db.query<{ name: string }>("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'")
        : await db.query<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'");
    expect(tables.map((table) => table.name)).toEqual(expect.arrayContaining(['users', 'projects', 'boxes', 'sessions', 'security_events', 'webhooks', 'jobs']));
    const rows: Array<{ table: string; row: string }> = [];
    for (const { name } of tables) {
      for (const row of await db.query(`SELECT * FROM "${name}"`)) rows.push({ table: name, row: JSON.stringify(row) });
    }
    return rows;
  }

  async function blobKeys(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    for await (const key of t.server.ctx.blobs.list(prefix)) keys.push(key);
    return keys;
  }

  it('deletes its projects, files with their bytes, artwork, players, comments, webhooks, tokens, sessions and events, and nothing of others', async () => {
    const leaving = await t.as('leaving@example.com');
    const other = await t.as('staying@example.com');
    const store = t.server.ctx.store;
    const leaver = (await store.users.findByEmail('leaving@example.com'))!;

    // Its own project: a file (bytes), artwork, a player with a collaborator, comments by both, a reaction, a webhook.
    const { data: own } = await leaving.api.POST('/projects', { body: { name: 'Mine' } });
    const projectid = own!.id;
    const file = (await leaving.api.uploadFile(projectid, { name: 'mix.wav', mimeType: 'audio/wav' }, bytes('RIFF bytes of a mix'))).data!;
    const pending = await leaving.api.POST('/projects/{projectid}/files', { params: { path: { projectid } }, body: { name: 'later.wav', mimeType: 'audio/wav', size: 10 } });
    expect(pending.response.status).toBe(200);
    expect((await leaving.api.uploadArtwork(projectid, { name: 'cover.png', mimeType: 'image/png' }, onePixelPng)).error).toBeUndefined();
    const { data: player } = await leaving.api.POST('/players', {
      body: { name: 'For the label', projectid, options: { comments: true }, collaborators: [{ email: 'staying@example.com', role: 'editor' }] },
    });
    const commentsAt = `/projects/${projectid}/files/${file.box.id}/comments`;
    const comment = await (await t.fetch(commentsAt, { ...json({ message: 'Louder?' }), token: leaving.token })).json();
    expect((await t.fetch(commentsAt, { ...json({ message: 'Yes' }), token: other.token })).status).toBe(200);
    expect((await t.fetch(`${commentsAt}/${comment.id}`, { ...json({ react: '👍' }), token: other.token })).status).toBe(200);
    expect((await leaving.api.POST('/webhooks', { body: { label: 'hook', url: 'http://127.0.0.1:9/hook', events: ['comment.created', 'player.created'] } })).error).toBeUndefined();
    const session = await signIn(t.server, 'leaving@example.com');
    const { data: minted } = await session.api.POST('/me/tokens', { body: { name: 'ci', scopes: ['projects:read'] } });
    await leaving.api.POST('/me', { body: { name: 'Leaving Person' } });
    await signIn(t.server, 'leaving@example.com');
    await store.db.execute("INSERT INTO passkeys (id, user_id, credential_id, public_key, name, time_created) VALUES ('pk_gone', $1, 'cred-gone', 'key', 'Laptop', 1)", [leaver.id]);
    await store.db.execute("INSERT INTO identities (issuer, subject, user_id, time_created) VALUES ('https://id.example.com', 'sub-gone', $1, 1)", [leaver.id]);

    // Someone else's project where it is an editor: it uploads a file, makes a player, comments and reacts there.
    const { data: theirs } = await other.api.POST('/players', { body: { name: 'Theirs', collaborators: [{ email: 'leaving@example.com', role: 'editor' }] } });
    const theirProject = theirs!.projectid;
    const { data: theirFile } = await other.api.uploadFile(theirProject, { name: 'theirs.wav', mimeType: 'audio/wav' }, bytes('RIFF their mix'));
    const { data: contributed } = await leaving.api.uploadFile(theirProject, { name: 'contribution.wav', mimeType: 'audio/wav' }, bytes('RIFF my part'));
    const { data: madeThere } = await leaving.api.POST('/players', { body: { name: 'Made there', projectid: theirProject } });
    const theirComments = `/projects/${theirProject}/files/${theirFile!.box.id}/comments`;
    const theirComment = await (await t.fetch(theirComments, { ...json({ message: 'Nice' }), token: other.token })).json();
    expect((await t.fetch(theirComments, { ...json({ message: 'From me' }), token: leaving.token })).status).toBe(200);
    expect((await t.fetch(`${theirComments}/${theirComment.id}`, { ...json({ react: '🔥' }), token: leaving.token })).status).toBe(200);
    // An invitation it made for someone else stays usable.
    await store.db.execute(
      "INSERT INTO one_time_links (id, kind, secret_hash, email, created_by, time_created, time_expires) VALUES ('lnk_made', 'invitation', 'hash-made', 'friend@example.com', $1, 1, 9999999999999)",
      [leaver.id],
    );

    const ownBlobs = await blobKeys(projectBlobPrefix(projectid));
    expect(ownBlobs.length).toBeGreaterThanOrEqual(2);
    const references = [leaver.id, 'leaving@example.com', 'Leaving Person', projectid, file.box.id, player!.id];
    expect((await everyRow()).filter(({ row }) => references.some((reference) => row.includes(reference))).length).toBeGreaterThan(10);

    const deleted = await session.fetch('/me', { ...json({ password: TEST_PASSWORD }), method: 'DELETE' });
    expect(deleted.status).toBe(200);
    expect(deleted.headers.getSetCookie().join()).toMatch(/as_session=;/);

    const left = (await everyRow()).filter(({ row }) => references.some((reference) => row.includes(reference)));
    expect(left).toEqual([]);
    expect(await blobKeys(projectBlobPrefix(projectid))).toEqual([]);
    expect((await blobKeys(ALL_PROJECTS_PREFIX)).filter((key) => ownBlobs.includes(key))).toEqual([]);
    // Its tokens and sessions no longer work.
    expect((await t.fetch('/me', { token: leaving.token })).status).toBe(401);
    expect((await t.fetch('/me', { token: minted!.secret })).status).toBe(401);
    expect((await session.fetch('/me')).status).toBe(401);

    // The other project is whole: its files (the contribution too) and their bytes, the player made there, the comments.
    const { data: boxes } = await other.api.GET('/projects/{projectid}/all', { params: { path: { projectid: theirProject } } });
    expect(boxes!.map((box) => box.id)).toEqual(expect.arrayContaining([theirFile!.box.id, contributed!.box.id]));
    const download = await other.api.GET('/projects/{projectid}/files/{fileid}/download', { params: { path: { projectid: theirProject, fileid: contributed!.box.id } } });
    expect(download.response.status).toBe(200);
    expect((await other.api.GET('/players/{playerid}', { params: { path: { playerid: madeThere!.id } } })).response.status).toBe(200);
    const { data: comments } = await other.api.GET('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid: theirProject, fileid: theirFile!.box.id } } });
    expect(comments!.map((item) => item.message)).toEqual(expect.arrayContaining(['Nice', 'From me']));
    expect(comments!.find((item) => item.id === theirComment.id)!.reactions).toEqual({});
    // The invitation it made still works: it forgot its maker only.
    expect(await store.db.query("SELECT created_by FROM one_time_links WHERE id = 'lnk_made'")).toEqual([{ created_by: null }]);
  });

  it('is refused to a bearer token, to a wrong password, and without one to a password session, and deletes nothing', async () => {
    const { token } = await t.as('careful@example.com');
    const byToken = await t.fetch('/me', { ...json({ password: TEST_PASSWORD }), method: 'DELETE', token });
    expect(byToken.status).toBe(403);
    expect(await byToken.json()).toMatchObject({ type: '/problems/forbidden', detail: expect.stringContaining('signed-in session') });
    const session = await signIn(t.server, 'careful@example.com');
    const wrong = await session.fetch('/me', { ...json({ password: 'not the password at all' }), method: 'DELETE' });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toMatchObject({ detail: expect.stringContaining('password is not right') });
    for (const init of [json({}), {}]) {
      const without = await session.fetch('/me', { ...init, method: 'DELETE' });
      expect(without.status).toBe(400);
    }
    expect((await t.fetch('/me', { token })).status).toBe(200);
    expect((await session.fetch('/me')).status).toBe(200);
  });

  it('takes no password within five minutes of a passkey sign-in, and asks for it after', async () => {
    const store = t.server.ctx.store;
    const passkeySession = async (email: string) => {
      const user = await store.users.findOrCreate(email, Date.now());
      const { secret } = await store.sessions.create(user.id, 'passkey', { userAgent: null, address: null }, t.server.clock.now());
      const origin = new URL(t.server.apiUrl).origin;
      return (init: RequestInit = {}) => t.fetch('/me', { ...init, headers: { Cookie: `as_session=${secret}`, Origin: origin, 'Sec-Fetch-Site': 'same-origin' } });
    };
    const late = await passkeySession('late-passkey@example.com');
    const soon = await passkeySession('recent-passkey@example.com');
    expect((await soon({ method: 'DELETE' })).status).toBe(200);
    expect(await store.users.findByEmail('recent-passkey@example.com')).toBeUndefined();
    t.server.clock.advance(5 * 60_000 + 1);
    expect((await late({ method: 'DELETE' })).status).toBe(400);
    expect(await store.users.findByEmail('late-passkey@example.com')).toBeDefined();
  });

  it("keeps the server's last administrator (409), and deletes an administrator who is not the last", async () => {
    const store = t.server.ctx.store;
    const session = await signIn(t.server, 'sole-admin@example.com');
    await store.db.execute("UPDATE users SET is_admin = 1 WHERE email = 'sole-admin@example.com'");
    const refused = await session.fetch('/me', { ...json({ password: TEST_PASSWORD }), method: 'DELETE' });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({ type: '/problems/conflict', detail: expect.stringContaining('last administrator') });
    expect(await store.users.findByEmail('sole-admin@example.com')).toBeDefined();
    await store.users.findOrCreate('next-admin@example.com', Date.now());
    await store.db.execute("UPDATE users SET is_admin = 1 WHERE email = 'next-admin@example.com'");
    expect((await session.fetch('/me', { ...json({ password: TEST_PASSWORD }), method: 'DELETE' })).status).toBe(200);
    expect(await store.users.findByEmail('sole-admin@example.com')).toBeUndefined();
  });

  it('deletes through the service too, once (the second time there is no account)', async () => {
    const user = await t.server.ctx.store.users.findOrCreate('service@example.com', Date.now());
    expect(await deleteAccount(t.server.ctx, user.id)).toBe(true);
    expect(await deleteAccount(t.server.ctx, user.id)).toBe(false);
  });
});
