/**
 * The rules of comments, through the HTTP API, on SQLite and PostgreSQL:
 * project members by bearer token, and listeners on a player by session.
 */
import { describe, expect, it } from 'vitest';
import type { ApiClient, Schemas } from '../../../generated/client.ts';
import { backends } from '../../testing/databases.ts';
import { json, useTestServer } from '../../testing/harness.ts';
import { PLAYER_COMMENT_WRITES } from './comments-handlers.ts';

type Comment = Schemas['Comment'];

describe.each(backends)('comments on %s', (backend) => {
  const t = useTestServer(backend);
  let n = 0;

  /** A project of a fresh owner, with one uploaded file, and a viewer and an editor invited on a player of it. */
  async function setup(playerOptions: Schemas['PlayerOptionsInput'] = {}) {
    n += 1;
    const owner = await t.as(`owner${n}@example.com`);
    const { data: project } = await owner.api.POST('/projects', { body: { name: 'Comments' } });
    const projectid = project!.id;
    const { data } = await owner.api.uploadFile(projectid, { name: 'mix.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('RIFF bytes of a mix'));
    const { data: player } = await owner.api.POST('/players', {
      body: {
        name: 'For the label',
        projectid,
        options: { comments: true, ...playerOptions },
        collaborators: [
          { email: `viewer${n}@example.com`, role: 'viewer' },
          { email: `editor${n}@example.com`, role: 'editor' },
        ],
      },
    });
    return {
      owner,
      viewer: await t.as(`viewer${n}@example.com`),
      editor: await t.as(`editor${n}@example.com`),
      stranger: await t.as(`stranger${n}@example.com`),
      projectid,
      fileid: data!.upload.boxid,
      stackid: data!.upload.stackid,
      playerid: player!.id,
    };
  }

  const path = (projectid: string, fileid: string, commentid?: string) => `/projects/${projectid}/files/${fileid}/comments${commentid ? `/${commentid}` : ''}`;

  async function post(token: string, at: string, body: unknown) {
    const response = await t.fetch(at, { ...json(body), token });
    return { status: response.status, body: await response.json() };
  }
  async function del(token: string, at: string) {
    const response = await t.fetch(at, { method: 'DELETE', token });
    return { status: response.status, body: await response.json() };
  }
  async function list(api: ApiClient, projectid: string, fileid: string): Promise<Comment[]> {
    const { data, response } = await api.GET('/projects/{projectid}/files/{fileid}/comments', { params: { path: { projectid, fileid } } });
    expect(response.status).toBe(200);
    return data!;
  }

  describe('through the API', () => {
    it('comments as the member, under "Project member" until they set a name, then under it, never their email', async () => {
      const { owner, viewer, projectid, fileid } = await setup();
      const created = await post(owner.token, path(projectid, fileid), { message: 'Snare **too loud**', audioTimestamp: 1.5 });
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({
        object: 'comment',
        fileid,
        message: 'Snare **too loud**',
        audioTimestamp: 1.5,
        isReply: false,
        completed: false,
        pinned: false,
        creator: { name: 'Project member', kind: 'member', mine: true },
        reactions: {},
      });
      expect(created.body.id).toMatch(/^cmt_/);
      expect(created.body).not.toHaveProperty('parentid');
      expect(created.body).not.toHaveProperty('audioTimestampEnd');

      const named = await post(owner.token, '/me', { name: '  Sam Rivera ' });
      expect(named).toMatchObject({ status: 200, body: { name: 'Sam Rivera' } });
      // The new name shows on a comment written before it, and to others too, with `mine` theirs.
      const [seen] = await list(viewer.api, projectid, fileid);
      expect(seen.creator).toEqual({ name: 'Sam Rivera', kind: 'member', mine: false });
      const everything = JSON.stringify(await list(owner.api, projectid, fileid));
      expect(everything).not.toContain('@example.com');
      expect(everything).not.toContain(`owner${n}`);
    });

    it('sets and removes the display name with POST /me, and refuses a blank one', async () => {
      const { owner } = await setup();
      expect((await post(owner.token, '/me', { name: 'Alex' })).body).toMatchObject({ object: 'user', name: 'Alex' });
      expect((await owner.api.GET('/me')).data).toMatchObject({ name: 'Alex' });
      const blank = await post(owner.token, '/me', { name: '   ' });
      expect(blank.status).toBe(400);
      expect(blank.body.errors[0]).toMatchObject({ pointer: '#/name' });
      const cleared = await post(owner.token, '/me', { name: null });
      expect(cleared.status).toBe(200);
      expect(cleared.body).not.toHaveProperty('name');
    });

    it('lets every role read and comment; refuses strangers with 404, and folders and stacks with 404', async () => {
      const { owner, viewer, stranger, projectid, fileid, stackid } = await setup();
      expect((await post(viewer.token, path(projectid, fileid), { message: 'From a viewer' })).status).toBe(200);
      expect((await list(owner.api, projectid, fileid)).map((c) => c.message)).toEqual(['From a viewer']);
      const outsider = await t.fetch(path(projectid, fileid), { token: stranger.token });
      expect(outsider.status).toBe(404);
      expect((await post(stranger.token, path(projectid, fileid), { message: 'x' })).status).toBe(404);
      const onStack = await post(owner.token, path(projectid, stackid), { message: 'x' });
      expect(onStack.status).toBe(404);
      expect(onStack.body.detail).toMatch(/is a stack.*Comments belong to files/);
      const { data: folder } = await owner.api.POST('/projects/{projectid}/folders', { params: { path: { projectid } }, body: { name: 'F' } });
      expect((await t.fetch(path(projectid, folder!.id), { token: owner.token })).status).toBe(404);
      expect((await t.fetch(path(projectid, 'box_nothing'), { token: owner.token })).status).toBe(404);
    });

    it('keeps timestamps in order and within the duration, once it is known', async () => {
      const { owner, projectid, fileid } = await setup();
      const endOnly = await post(owner.token, path(projectid, fileid), { message: 'x', audioTimestampEnd: 3 });
      expect(endOnly).toMatchObject({ status: 400, body: { errors: [{ pointer: '#/audioTimestamp' }] } });
      const backwards = await post(owner.token, path(projectid, fileid), { message: 'x', audioTimestamp: 3, audioTimestampEnd: 3 });
      expect(backwards).toMatchObject({ status: 400, body: { errors: [{ pointer: '#/audioTimestampEnd' }] } });
      // Unknown duration (not analysed): any time within the schema's range is taken.
      expect((await post(owner.token, path(projectid, fileid), { message: 'x', audioTimestamp: 500 })).status).toBe(200);
      await t.server.ctx.store.db.execute('UPDATE boxes SET duration = $2 WHERE id = $1', [fileid, 61.004]);
      const past = await post(owner.token, path(projectid, fileid), { message: 'x', audioTimestamp: 42.5, audioTimestampEnd: 61.01 });
      expect(past).toMatchObject({ status: 400, body: { errors: [{ pointer: '#/audioTimestampEnd' }] } });
      expect(past.body.detail).toContain('61 s');
      const range = await post(owner.token, path(projectid, fileid), { message: 'x', audioTimestamp: 42.5, audioTimestampEnd: 61 });
      expect(range).toMatchObject({ status: 200, body: { audioTimestamp: 42.5, audioTimestampEnd: 61 } });
    });

    it('takes replies one level deep, on the same file, without timestamps; deleting a comment deletes its replies', async () => {
      const { owner, viewer, projectid, fileid } = await setup();
      const { data: second } = await owner.api.uploadFile(projectid, { name: 'other.wav', mimeType: 'audio/wav' }, new TextEncoder().encode('other'));
      const top = (await post(owner.token, path(projectid, fileid), { message: 'Top', audioTimestamp: 2 })).body as Comment;
      const reply = await post(viewer.token, path(projectid, fileid), { message: 'Agreed', parentid: top.id });
      expect(reply).toMatchObject({ status: 200, body: { parentid: top.id, isReply: true } });
      const deeper = await post(owner.token, path(projectid, fileid), { message: 'x', parentid: reply.body.id });
      expect(deeper).toMatchObject({ status: 400, body: { errors: [{ pointer: '#/parentid' }] } });
      const elsewhere = await post(owner.token, path(projectid, second!.upload.boxid), { message: 'x', parentid: top.id });
      expect(elsewhere).toMatchObject({ status: 400, body: { errors: [{ pointer: '#/parentid' }] } });
      const timed = await post(owner.token, path(projectid, fileid), { message: 'x', parentid: top.id, audioTimestamp: 1 });
      expect(timed).toMatchObject({ status: 400, body: { errors: [{ pointer: '#/audioTimestamp' }] } });

      expect((await del(owner.token, path(projectid, fileid, top.id))).status).toBe(200);
      expect(await list(owner.api, projectid, fileid)).toEqual([]);
      expect((await t.fetch(path(projectid, fileid, reply.body.id), { token: owner.token })).status).toBe(404);
    });

    it('lets authors change message and completed of their own; writers complete and pin any, but edit no one else\'s message', async () => {
      const { owner, viewer, editor, projectid, fileid } = await setup();
      const mine = (await post(viewer.token, path(projectid, fileid), { message: 'Typo' })).body as Comment;
      const edited = await post(viewer.token, path(projectid, fileid, mine.id), { message: 'Fixed', completed: true });
      expect(edited).toMatchObject({ status: 200, body: { message: 'Fixed', completed: true } });
      expect(edited.body.timeModified).toBeGreaterThanOrEqual(mine.timeModified);

      expect((await post(editor.token, path(projectid, fileid, mine.id), { message: 'Not yours' })).status).toBe(403);
      expect((await post(editor.token, path(projectid, fileid, mine.id), { completed: false, pinned: true })).body).toMatchObject({ completed: false, pinned: true });

      const owners = (await post(owner.token, path(projectid, fileid), { message: 'Owner note' })).body as Comment;
      expect((await post(viewer.token, path(projectid, fileid, owners.id), { completed: true })).status).toBe(403);
      expect((await post(viewer.token, path(projectid, fileid, mine.id), { pinned: false })).status).toBe(403);
      // All or nothing: a field the caller may not change refuses the whole request.
      const mixed = await post(viewer.token, path(projectid, fileid, mine.id), { message: 'Sneaky', pinned: false });
      expect(mixed.status).toBe(403);
      const { data: unchanged } = await viewer.api.GET('/projects/{projectid}/files/{fileid}/comments/{commentid}', { params: { path: { projectid, fileid, commentid: mine.id } } });
      expect(unchanged).toMatchObject({ message: 'Fixed', pinned: true });
    });

    it('pins on create only for writers', async () => {
      const { viewer, editor, projectid, fileid } = await setup();
      const refused = await post(viewer.token, path(projectid, fileid), { message: 'Pin me', pinned: true });
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(/pin/);
      expect(await list(viewer.api, projectid, fileid)).toEqual([]);
      expect((await post(editor.token, path(projectid, fileid), { message: 'Read first', pinned: true })).body).toMatchObject({ pinned: true });
    });

    it('counts reactions per person and emoji, with mine for the caller, without touching timeModified', async () => {
      const { owner, viewer, editor, projectid, fileid } = await setup();
      const comment = (await post(owner.token, path(projectid, fileid), { message: 'Mix 3 is the one' })).body as Comment;
      const at = path(projectid, fileid, comment.id);
      await post(viewer.token, at, { react: '👍' });
      await post(viewer.token, at, { react: '👍' });
      await post(editor.token, at, { react: '👍' });
      const both = await post(editor.token, at, { react: '🔥' });
      expect(both.body.reactions).toEqual({ '👍': { count: 2, mine: true }, '🔥': { count: 1, mine: true } });
      expect(both.body.timeModified).toBe(comment.timeModified);
      const [asOwner] = await list(owner.api, projectid, fileid);
      expect(asOwner.reactions).toEqual({ '👍': { count: 2, mine: false }, '🔥': { count: 1, mine: false } });
      const swapped = await post(viewer.token, at, { unreact: '👍', react: '👍🏽' });
      expect(swapped.body.reactions).toEqual({ '👍': { count: 1, mine: false }, '🔥': { count: 1, mine: false }, '👍🏽': { count: 1, mine: true } });
      expect((await post(viewer.token, at, { react: 'yes' })).body).toMatchObject({ status: 400, errors: [{ pointer: '#/react' }] });
      expect((await post(viewer.token, at, { react: '👍👍' })).status).toBe(400);
      expect((await post(viewer.token, at, { react: '🔥', unreact: '🔥' })).status).toBe(400);
    });

    it('deletes: authors their own, writers any, viewers no one else\'s', async () => {
      const { owner, viewer, editor, projectid, fileid } = await setup();
      const owners = (await post(owner.token, path(projectid, fileid), { message: 'A' })).body as Comment;
      const viewers = (await post(viewer.token, path(projectid, fileid), { message: 'B' })).body as Comment;
      const other = (await post(viewer.token, path(projectid, fileid), { message: 'C' })).body as Comment;
      expect((await del(viewer.token, path(projectid, fileid, owners.id))).status).toBe(403);
      expect(await del(viewer.token, path(projectid, fileid, viewers.id))).toEqual({ status: 200, body: {} });
      expect((await del(editor.token, path(projectid, fileid, other.id))).status).toBe(200);
      expect((await del(editor.token, path(projectid, fileid, other.id))).status).toBe(404);
      expect((await list(owner.api, projectid, fileid)).map((c) => c.id)).toEqual([owners.id]);
    });

    it('lists oldest first, and deleting the file deletes its comments and their reactions', async () => {
      const { owner, projectid, fileid } = await setup();
      const first = (await post(owner.token, path(projectid, fileid), { message: 'first' })).body as Comment;
      t.server.clock.advance(10);
      await post(owner.token, path(projectid, fileid), { message: 'second', parentid: first.id });
      t.server.clock.advance(10);
      await post(owner.token, path(projectid, fileid), { message: 'third' });
      await post(owner.token, path(projectid, fileid, first.id), { react: '🎉' });
      expect((await list(owner.api, projectid, fileid)).map((c) => c.message)).toEqual(['first', 'second', 'third']);

      const count = async (table: string) =>
        Number((await t.server.ctx.store.db.query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE ${table === 'comments' ? 'file_id = $1' : 'comment_id = $1'}`, [table === 'comments' ? fileid : first.id]))[0].n);
      expect([await count('comments'), await count('comment_reactions')]).toEqual([3, 1]);
      expect((await t.fetch(`/projects/${projectid}/files/${fileid}`, { method: 'DELETE', token: owner.token })).status).toBe(200);
      expect([await count('comments'), await count('comment_reactions')]).toEqual([0, 0]);
    });
  });

  describe('on a player', () => {
    const playerPath = (playerid: string, fileid: string, commentid?: string) => `/players/${playerid}/files/${fileid}/comments${commentid ? `/${commentid}` : ''}`;

    /** Opens a listener session on the player, as its page does; resolves to the Cookie header that carries it. */
    async function openSession(playerid: string, body: Record<string, string>, cookie?: string): Promise<string> {
      const response = await t.fetch(`/players/${playerid}/session`, {
        ...json(body),
        headers: { 'Content-Type': 'application/json', 'Sec-Fetch-Site': 'same-origin', ...(cookie ? { Cookie: cookie } : {}) },
      });
      expect(response.status, await response.clone().text()).toBe(200);
      return response.headers.get('set-cookie')!.split(';')[0];
    }

    async function asListener(cookie: string | undefined, at: string, init: RequestInit = {}) {
      const headers = new Headers(init.headers);
      if (cookie) headers.set('Cookie', cookie);
      const response = await t.fetch(at, { ...init, headers });
      return { status: response.status, headers: response.headers, body: await response.json() };
    }
    const listenerPost = (cookie: string | undefined, at: string, body: unknown) => asListener(cookie, at, json(body));

    it('lets a listener read, asks for a name before they post, then posts under it', async () => {
      const { owner, playerid, projectid, fileid } = await setup();
      await post(owner.token, path(projectid, fileid), { message: 'From the owner' });
      const read = await asListener(undefined, playerPath(playerid, fileid));
      expect(read.status).toBe(200);
      expect(read.body).toMatchObject([{ message: 'From the owner', creator: { name: 'Project member', kind: 'member', mine: false } }]);

      const nameless = await listenerPost(undefined, playerPath(playerid, fileid), { message: 'Hi' });
      expect(nameless.status).toBe(401);
      expect(nameless.body).toMatchObject({ type: '/problems/name-required', title: 'A display name is needed' });
      expect(nameless.body.detail).toContain(`POST /players/${playerid}/session`);
      expect(nameless.headers.get('www-authenticate')).toBe(`PlayerSession realm="${playerid}"`);

      const cookie = await openSession(playerid, { name: 'Alex (A&R)' });
      const posted = await listenerPost(cookie, playerPath(playerid, fileid), { message: 'Love the bridge', audioTimestamp: 0.5 });
      expect(posted).toMatchObject({ status: 200, body: { creator: { name: 'Alex (A&R)', kind: 'listener', mine: true } } });
      // The same comment, through the API, to the owner: a listener's, not theirs.
      const [, theirs] = await list(owner.api, projectid, fileid);
      expect(theirs).toMatchObject({ id: posted.body.id, creator: { name: 'Alex (A&R)', kind: 'listener', mine: false } });
      // Another listener's session is not the author.
      const other = await openSession(playerid, { name: 'Someone else' });
      const [, toOther] = (await asListener(other, playerPath(playerid, fileid))).body as Comment[];
      expect(toOther.creator.mine).toBe(false);
    });

    it('lets a listener edit and delete their own, react to any, and moderate nothing', async () => {
      const { owner, playerid, projectid, fileid } = await setup();
      const owners = (await post(owner.token, path(projectid, fileid), { message: 'Owner note' })).body as Comment;
      const cookie = await openSession(playerid, { name: 'Alex' });
      const own = (await listenerPost(cookie, playerPath(playerid, fileid), { message: 'Draft' })).body as Comment;
      expect((await listenerPost(cookie, playerPath(playerid, fileid, own.id), { message: 'Final', completed: true })).body).toMatchObject({ message: 'Final', completed: true });
      expect((await listenerPost(cookie, playerPath(playerid, fileid), { message: 'Pin', pinned: true })).status).toBe(403);
      expect((await listenerPost(cookie, playerPath(playerid, fileid, owners.id), { completed: true })).status).toBe(403);
      expect((await listenerPost(cookie, playerPath(playerid, fileid, owners.id), { react: '❤️' })).body.reactions).toEqual({ '❤️': { count: 1, mine: true } });
      expect((await asListener(cookie, playerPath(playerid, fileid, owners.id), { method: 'DELETE' })).status).toBe(403);
      // Without a session there is nothing to count a reaction by.
      const anonymous = await listenerPost(undefined, playerPath(playerid, fileid, owners.id), { react: '👍' });
      expect(anonymous).toMatchObject({ status: 401, body: { type: '/problems/name-required' } });
      expect((await asListener(cookie, playerPath(playerid, fileid, own.id), { method: 'DELETE' })).status).toBe(200);
      expect((await list(owner.api, projectid, fileid)).map((c) => c.id)).toEqual([owners.id]);
    });

    it('lets a member on the player comment as themselves, and a writer pin', async () => {
      const { editor, viewer, playerid, fileid } = await setup();
      await post(editor.token, '/me', { name: 'Eddie' });
      const pinned = await post(editor.token, playerPath(playerid, fileid), { message: 'Pinned', pinned: true });
      expect(pinned).toMatchObject({ status: 200, body: { pinned: true, creator: { name: 'Eddie', kind: 'member', mine: true } } });
      expect((await post(viewer.token, playerPath(playerid, fileid), { message: 'Pin', pinned: true })).status).toBe(403);
    });

    it('answers 403 when comments are off, and 404 for a file the player does not show', async () => {
      const off = await setup({ comments: false });
      const refused = await asListener(undefined, playerPath(off.playerid, off.fileid));
      expect(refused.status).toBe(403);
      expect(refused.body.detail).toMatch(/Comments are off/);
      const on = await setup();
      expect((await asListener(undefined, playerPath(on.playerid, off.fileid))).status).toBe(404);
      expect((await asListener(undefined, playerPath(on.playerid, on.stackid))).status).toBe(404);
    });

    it('answers 401 player-locked, with its lock, on a player for collaborators only', async () => {
      const { owner, projectid, fileid } = await setup();
      const { data: closed } = await owner.api.POST('/players', { body: { name: 'Closed', projectid, public: false, options: { comments: true } } });
      const read = await asListener(undefined, playerPath(closed!.id, fileid));
      expect(read).toMatchObject({ status: 401, body: { type: '/problems/player-locked', lock: 'collaborators' } });
      const write = await listenerPost(undefined, playerPath(closed!.id, fileid), { message: 'x' });
      expect(write).toMatchObject({ status: 401, body: { type: '/problems/player-locked', lock: 'collaborators' } });
      expect(write.headers.get('www-authenticate')).toBe(`PlayerSession realm="${closed!.id}"`);
      // The owner's token opens it: they are a member.
      expect((await post(owner.token, playerPath(closed!.id, fileid), { message: 'Mine' })).body.creator).toMatchObject({ kind: 'member', mine: true });
    });

    it("keeps a listener's comment on the player it was made on; members' comments show on every player, and all of them through the API", async () => {
      const { owner, editor, projectid, fileid, playerid: review } = await setup();
      // The review: behind a password. And a public player of the same file.
      await owner.api.POST('/players/{playerid}', { params: { path: { playerid: review } }, body: { password: 'for-the-label' } });
      const { data: open } = await owner.api.POST('/players', { body: { name: 'Public', projectid, public: true, options: { comments: true } } });
      const reviewer = await openSession(review, { password: 'for-the-label' });
      const named = await openSession(review, { name: 'A&R' }, reviewer);
      const secret = (await listenerPost(named, playerPath(review, fileid), { message: 'Drop this mix, the label hates it' })).body as Comment;
      expect(secret.creator).toMatchObject({ kind: 'listener', mine: true });
      const answer = (await post(editor.token, playerPath(review, fileid), { message: 'Agreed, v3 it is', parentid: secret.id })).body as Comment;
      const memberNote = (await post(owner.token, path(projectid, fileid), { message: 'Mastered on Friday' })).body as Comment;
      const fan = await openSession(open!.id, { name: 'Fan' });
      const fans = (await listenerPost(fan, playerPath(open!.id, fileid), { message: 'Great tune' })).body as Comment;
      // A listener's comment of before the player was recorded (migration 11): on no player.
      const legacy = { ...(await t.server.ctx.store.comments.get(fileid, fans.id))!, id: 'cmt_legacy0000001', message: 'Old note', playerId: null };
      await t.server.ctx.store.comments.insert(legacy);

      const ids = (comments: Comment[]) => comments.map((comment) => comment.id).sort();
      // The public player: members' comments and its own listeners', nothing of the review's, not even the member's reply there.
      for (const cookie of [undefined, fan]) {
        const seen = await asListener(cookie, playerPath(open!.id, fileid));
        expect(seen.status).toBe(200);
        expect(ids(seen.body)).toEqual(ids([memberNote, fans] as Comment[]));
      }
      // The review: its own listener's, with the reply, and members'.
      expect(ids((await asListener(named, playerPath(review, fileid))).body)).toEqual(ids([secret, answer, memberNote]));
      // Through the API, members see every comment.
      expect(ids(await list(owner.api, projectid, fileid))).toEqual(ids([secret, answer, memberNote, fans, { id: legacy.id }] as Comment[]));
      // Through the API, with a paging cursor too.
      const paged = await t.fetch(`${path(projectid, fileid)}?limit=10`, { token: owner.token });
      expect(((await paged.json()) as Comment[]).length).toBe(5);

      // On the public player the review's comment is not there at all: not to answer, react to, change or delete.
      const reacted = await listenerPost(fan, playerPath(open!.id, fileid, secret.id), { react: '👍' });
      expect(reacted).toMatchObject({ status: 404, body: { detail: expect.stringContaining(secret.id) } });
      expect((await listenerPost(fan, playerPath(open!.id, fileid, answer.id), { react: '👍' })).status).toBe(404);
      expect((await asListener(fan, playerPath(open!.id, fileid, secret.id), { method: 'DELETE' })).status).toBe(404);
      const reply = await listenerPost(fan, playerPath(open!.id, fileid), { message: 'What label?', parentid: secret.id });
      expect(reply.status).toBe(400);
      expect(reply.body.errors).toEqual([expect.objectContaining({ pointer: '#/parentid' })]);
      // Nor to a member there: a member on a player sees what its listeners see.
      expect((await post(editor.token, playerPath(open!.id, fileid), { message: 'x', parentid: secret.id })).status).toBe(400);
      // The fan's own comment is not on the review.
      expect((await listenerPost(named, playerPath(review, fileid, fans.id), { react: '👍' })).status).toBe(404);
      expect((await post(owner.token, playerPath(open!.id, fileid, secret.id), { pinned: true })).status).toBe(404);
      // The review made collaborators-only: its listeners' comments stay with it, off the public player.
      await owner.api.POST('/players/{playerid}', { params: { path: { playerid: review } }, body: { public: false } });
      expect(ids((await asListener(fan, playerPath(open!.id, fileid))).body)).toEqual(ids([memberNote, fans] as Comment[]));
      // A member's comment made there shows on the public player too.
      const fromReview = (await post(editor.token, playerPath(review, fileid), { message: 'Collaborators only now' })).body as Comment;
      expect(ids((await asListener(fan, playerPath(open!.id, fileid))).body)).toEqual(ids([memberNote, fans, fromReview]));
    });

    it(`limits a session's writes to ${PLAYER_COMMENT_WRITES.points} per ${PLAYER_COMMENT_WRITES.durationSeconds} s, with Retry-After`, async () => {
      const { playerid, fileid } = await setup();
      const cookie = await openSession(playerid, { name: 'Flood' });
      for (let i = 0; i < PLAYER_COMMENT_WRITES.points; i += 1) {
        expect((await listenerPost(cookie, playerPath(playerid, fileid), { message: `#${i}` })).status).toBe(200);
      }
      const limited = await listenerPost(cookie, playerPath(playerid, fileid), { message: 'one more' });
      expect(limited.status).toBe(429);
      expect(limited.body).toMatchObject({ type: '/problems/rate-limited' });
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Another session, and reading, are not held by it.
      const other = await openSession(playerid, { name: 'Calm' });
      expect((await listenerPost(other, playerPath(playerid, fileid), { message: 'fine' })).status).toBe(200);
      expect((await asListener(cookie, playerPath(playerid, fileid))).status).toBe(200);
    });
  });
});
