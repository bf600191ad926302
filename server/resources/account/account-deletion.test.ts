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
    await leaving.api.POST('/me/tokens', { body: { name: 'ci', scopes: ['projects:read'] } });
    await leaving.api.POST('/me', { body: { name: 'Leaving Person' } });
    await store.db.execute("INSERT INTO sessions (id, user_id, secret_hash, method, time_created, time_last_seen) VALUES ('ses_gone', $1, 'hash-of-gone', 'password', 1, 1)", [leaver.id]);
    await store.db.execute("INSERT INTO security_events (id, user_id, kind, time_created) VALUES ('sev_gone', $1, 'signin', 1)", [leaver.id]);
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

    expect(await deleteAccount(t.server.ctx, leaver.id)).toBe(true);

    const left = (await everyRow()).filter(({ row }) => references.some((reference) => row.includes(reference)));
    expect(left).toEqual([]);
    expect(await blobKeys(projectBlobPrefix(projectid))).toEqual([]);
    expect((await blobKeys(ALL_PROJECTS_PREFIX)).filter((key) => ownBlobs.includes(key))).toEqual([]);
    // Its tokens no longer work.
    expect((await t.fetch('/me', { token: leaving.token })).status).toBe(401);

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

    // A second deletion finds nothing.
    expect(await deleteAccount(t.server.ctx, leaver.id)).toBe(false);
  });

  it('is refused to a bearer token, and deletes nothing', async () => {
    const { token } = await t.as('token-only@example.com');
    const response = await t.fetch('/me', { ...json({ password: 'whatever it is' }), method: 'DELETE', token });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ type: '/problems/forbidden', detail: expect.stringContaining('signed-in session') });
    expect((await t.fetch('/me', { token })).status).toBe(200);
  });
});
