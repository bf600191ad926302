/**
 * The comment repository's SQL, the same on both engines (in the style of
 * the store conformance suite, store.conformance.ts): every backend runs
 * these unchanged.
 */
import { describe, expect, it } from 'vitest';
import { backends, useTestStore } from '../../testing/databases.ts';
import type { BoxRecord } from '../boxes/box-repository.ts';
import { newCommentId, type CommentRecord } from './comment-repository.ts';

describe.each(backends)('comment repository on %s', (backend) => {
  const t = useTestStore(backend);
  let n = 0;

  /** A project with one file box, and its owner. */
  async function file() {
    n += 1;
    const owner = await t.store.users.findOrCreate(`repo${n}@example.com`, 1);
    const projectId = `prj_comments${n}`;
    await t.store.projects.insert({ id: projectId, ownerId: owner.id, name: 'P', color: '#000000', sortBy: null, artworkId: null, timeCreated: 1, timeModified: 1 });
    const box: BoxRecord = {
      id: `box_file${n}`, projectId, kind: 'file', name: 'a.wav', color: '#000000', parentId: null, position: 0, trashed: false, hidden: false,
      versionName: null, status: 'ready', statusReason: null, size: 4, mimeType: 'audio/wav', duration: 10, audio: null, uploaderId: owner.id,
      version: 1, timeCreated: 1, timeModified: 1,
    };
    await t.store.boxes.insert(box);
    return { owner, box };
  }

  const comment = (fileId: string, overrides: Partial<CommentRecord> = {}): CommentRecord => ({
    id: newCommentId(),
    fileId,
    parentId: null,
    message: 'm',
    audioTimestamp: null,
    audioTimestampEnd: null,
    completed: false,
    pinned: false,
    author: { kind: 'listener', userId: null, sessionId: 'ses_a', name: 'Alex' },
    playerId: null,
    timeCreated: 10,
    timeModified: 10,
    ...overrides,
  });

  it('stores a comment as given, and reads a member\'s name from their account at each read', async () => {
    const { owner, box } = await file();
    const listener = comment(box.id, { audioTimestamp: 1.25, audioTimestampEnd: 2.5, completed: true });
    const member = comment(box.id, { author: { kind: 'member', userId: owner.id, sessionId: null, name: 'ignored for members' }, timeCreated: 11, timeModified: 11 });
    await t.store.comments.insert(listener);
    await t.store.comments.insert(member);
    expect(await t.store.comments.get(box.id, listener.id)).toEqual(listener);
    expect((await t.store.comments.get(box.id, member.id))!.author).toEqual({ kind: 'member', userId: owner.id, sessionId: null, name: null });
    await t.store.users.setName(owner.id, 'Sam');
    expect((await t.store.comments.list(box.id)).map((c) => c.author.name)).toEqual(['Alex', 'Sam']);
    expect(await t.store.comments.get('box_other', listener.id)).toBeUndefined();
  });

  it('changes only the fields given, with timeModified', async () => {
    const { box } = await file();
    const stored = comment(box.id);
    await t.store.comments.insert(stored);
    expect(await t.store.comments.update(box.id, stored.id, { pinned: true }, 20)).toBe(true);
    expect(await t.store.comments.update(box.id, stored.id, { message: 'new' }, 30)).toBe(true);
    expect(await t.store.comments.get(box.id, stored.id)).toMatchObject({ message: 'new', pinned: true, completed: false, timeModified: 30 });
    expect(await t.store.comments.update(box.id, 'cmt_none', { pinned: true }, 40)).toBe(false);
  });

  it('counts reactions once per reactor and emoji, in the order emoji were first used', async () => {
    const { box } = await file();
    const a = comment(box.id);
    const b = comment(box.id);
    await t.store.comments.insert(a);
    await t.store.comments.insert(b);
    await t.store.comments.react(a.id, '🔥', 'user:1', 1);
    await t.store.comments.react(a.id, '👍', 'user:1', 2);
    await t.store.comments.react(a.id, '👍', 'user:1', 3);
    await t.store.comments.react(a.id, '👍', 'session:2', 4);
    await t.store.comments.react(b.id, '👍', 'session:2', 5);
    const mine = await t.store.comments.reactions(box.id, 'user:1');
    expect(Object.entries(mine.get(a.id)!)).toEqual([['🔥', { count: 1, mine: true }], ['👍', { count: 2, mine: true }]]);
    expect(mine.get(b.id)).toEqual({ '👍': { count: 1, mine: false } });
    expect((await t.store.comments.reactions(box.id, null, b.id)).has(a.id)).toBe(false);
    await t.store.comments.unreact(a.id, '👍', 'user:1');
    expect((await t.store.comments.reactions(box.id, 'user:1')).get(a.id)).toEqual({ '🔥': { count: 1, mine: true }, '👍': { count: 1, mine: false } });
  });

  it('deletes a comment with its replies and reactions, and every comment with its file', async () => {
    const { box } = await file();
    const top = comment(box.id);
    const reply = comment(box.id, { parentId: top.id });
    const other = comment(box.id);
    for (const c of [top, reply, other]) await t.store.comments.insert(c);
    await t.store.comments.react(reply.id, '👍', 'user:1', 1);
    expect(await t.store.comments.delete(box.id, top.id)).toBe(true);
    expect((await t.store.comments.list(box.id)).map((c) => c.id)).toEqual([other.id]);
    expect(await t.store.db.query('SELECT * FROM comment_reactions WHERE comment_id = $1', [reply.id])).toEqual([]);
    await t.store.boxes.delete(box.projectId, box.id);
    expect(await t.store.db.query('SELECT * FROM comments WHERE file_id = $1', [box.id])).toEqual([]);
  });

  it('refuses a comment on a file that does not exist (the foreign key)', async () => {
    await expect(t.store.comments.insert(comment('box_gone'))).rejects.toThrow();
  });
});
