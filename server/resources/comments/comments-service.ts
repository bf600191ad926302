/**
 * Comments on a version of a track (a file box): the rules, once, for both
 * ways in. Through the API a project member comments with a bearer token
 * (projectCommenter); on a player a listener does, under the player's rules
 * (playerCommenter, from resolveListener). Both end in a Commenter, and every
 * rule below asks only it:
 *
 * - reading: whoever got a Commenter may read every comment of the file;
 * - writing: `message` by the author only; `completed` by the author or a
 *   moderator (a member whose role writes the project); `pinned` by a
 *   moderator only; reactions by anyone with an identity to react as;
 *   deleting by the author or a moderator.
 */
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Store } from '../../repositories.ts';
import { accessProject, type Caller } from '../../auth/access.ts';
import { canOnProject } from '../../auth/policy.ts';
import { badRequest, forbidden, type HttpProblem, notFound } from '../../lib/problems.ts';
import type { BoxRecord } from '../boxes/box-repository.ts';
import type { Listener } from '../listening/listener.ts';
import { newCommentId, type CommentRecord, type CommentScope, type Reactions } from './comment-repository.ts';
import { nameRequired, sessionRequired } from './comment-problems.ts';
import { recordEvent } from '../webhooks/outbox.ts';
import { notifyOfComment } from '../notifications/notifications-service.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'jobQueued'>;

/** Who is commenting, and what they may do beyond reading. */
export interface Commenter {
  /** The account behind the request, if any. */
  userId: string | null;
  /** The player session behind the request, if any. */
  sessionId: string | null;
  /** The ids that session had before it was renewed when it gained access: comments written under them are its own too. */
  formerSessionIds?: readonly string[];
  /** A project member: comments as themselves, under their account's name. */
  member: boolean;
  /** The name a listener (not a member) comments under; null until their session has one. */
  name: string | null;
  /** A member whose role writes the project: pins, completes and deletes any comment. */
  canModerate: boolean;
  /** On a player: the player, which a 401 asking for a session names. */
  playerId?: string;
}

/** What a member without a display name is shown as: never their email, nor any part of it. */
export const MEMBER_FALLBACK_NAME = 'Project member';

/** The file a comment goes on: a file box, never a folder or stack. */
function requireFile(box: BoxRecord | undefined, where: string, fileId: string): BoxRecord {
  if (!box) throw notFound(`${where} has no file ${fileId}.`);
  if (box.kind !== 'file') throw notFound(`${fileId} is a ${box.kind} of ${where}. Comments belong to files (versions of a track): comment on one of its files.`);
  return box;
}

/** A member of the project, by bearer token: every role reads and comments; owner, admin and editor moderate. */
export async function projectCommenter(ctx: Ports, caller: Caller, projectId: string, fileId: string): Promise<{ commenter: Commenter; file: BoxRecord }> {
  const { role } = await accessProject(ctx, caller, projectId, 'read');
  const file = requireFile(await ctx.store.boxes.get(projectId, fileId), `project ${projectId}`, fileId);
  const canModerate = canOnProject({ kind: 'user', role }, 'project:write');
  return { commenter: { userId: caller.id, sessionId: null, member: true, name: null, canModerate }, file };
}

/**
 * A listener on a player (or a member there), as resolveListener found
 * them: they need `player:comment` (the player's `comments` on, and the
 * player open to them), and the file must be one the player shows them.
 */
export async function playerCommenter(ctx: Ports, listener: Listener, fileId: string): Promise<{ commenter: Commenter; file: BoxRecord }> {
  const { player, principal } = listener;
  if (!listener.permissions.has('player:comment')) {
    throw forbidden(
      player.options.comments
        ? `You cannot comment on player ${player.id} yet: it opens to you once its paywall is paid.`
        : `Comments are off on player ${player.id}. Its owner can turn them on with the player's comments option.`,
    );
  }
  if (!listener.fileIds.has(fileId)) throw notFound(`Player ${player.id} has no file ${fileId}.`);
  const file = requireFile(await ctx.store.boxes.get(player.projectId, fileId), `player ${player.id}`, fileId);
  const member = principal.kind === 'collaborator' || (principal.kind === 'user' && principal.role !== undefined);
  return {
    commenter: {
      userId: listener.userId ?? null,
      sessionId: listener.sessionId ?? null,
      formerSessionIds: listener.formerSessionIds ?? [],
      member,
      name: member ? null : (listener.displayName ?? null),
      canModerate: listener.canModerate,
      playerId: player.id,
    },
    file,
  };
}

/** What a commenter's reactions are counted by: their account, else their player session; null when they have neither. */
export function reactorOf(commenter: Commenter): string | null {
  if (commenter.userId) return `user:${commenter.userId}`;
  if (commenter.sessionId) return `session:${commenter.sessionId}`;
  return null;
}

/**
 * A comment is its author's by account; a listener's without an account, by
 * the player session it came from, under its id now or one it had before it
 * gained access (a session renewed against fixation keeps what it wrote).
 */
export function isAuthor(comment: CommentRecord, commenter: Commenter): boolean {
  if (comment.author.userId !== null) return comment.author.userId === commenter.userId;
  const session = comment.author.sessionId;
  return session !== null && (session === commenter.sessionId || (commenter.formerSessionIds?.includes(session) ?? false));
}

export function commentJson(comment: CommentRecord, commenter: Commenter, reactions: Reactions = {}): Schemas['Comment'] {
  const { author } = comment;
  return {
    id: comment.id,
    object: 'comment',
    fileid: comment.fileId,
    message: comment.message,
    ...(comment.audioTimestamp !== null ? { audioTimestamp: comment.audioTimestamp } : {}),
    ...(comment.audioTimestampEnd !== null ? { audioTimestampEnd: comment.audioTimestampEnd } : {}),
    ...(comment.parentId !== null ? { parentid: comment.parentId } : {}),
    isReply: comment.parentId !== null,
    completed: comment.completed,
    pinned: comment.pinned,
    creator: {
      name: author.name ?? MEMBER_FALLBACK_NAME,
      kind: author.kind,
      mine: isAuthor(comment, commenter),
    },
    reactions,
    timeCreated: comment.timeCreated,
    timeModified: comment.timeModified,
  };
}

/**
 * The comments a commenter reads: on a player, a listener's comments of
 * that player only, members' everywhere (a listener's comment on a
 * collaborators-only review is no business of a public player's listeners);
 * through the API, all of them.
 */
const scopeOf = (commenter: Commenter): CommentScope => (commenter.playerId !== undefined ? { playerId: commenter.playerId } : undefined);

async function loadComment(store: Store, file: BoxRecord, commentId: string, commenter: Commenter): Promise<CommentRecord> {
  const comment = await store.comments.get(file.id, commentId, scopeOf(commenter));
  if (!comment) throw notFound(`File ${file.id} has no comment ${commentId}.`);
  return comment;
}

async function oneJson(store: Store, commenter: Commenter, comment: CommentRecord): Promise<Schemas['Comment']> {
  const reactions = await store.comments.reactions(comment.fileId, reactorOf(commenter), comment.id);
  return commentJson(comment, commenter, reactions.get(comment.id));
}

export async function listComments(ctx: Ports, commenter: Commenter, file: BoxRecord): Promise<Schemas['Comment'][]> {
  const [comments, reactions] = await Promise.all([ctx.store.comments.list(file.id, scopeOf(commenter)), ctx.store.comments.reactions(file.id, reactorOf(commenter))]);
  return comments.map((comment) => commentJson(comment, commenter, reactions.get(comment.id)));
}

export async function getComment(ctx: Ports, commenter: Commenter, file: BoxRecord, commentId: string): Promise<Schemas['Comment']> {
  return oneJson(ctx.store, commenter, await loadComment(ctx.store, file, commentId, commenter));
}

/** The duration clients see (boxJson rounds it to hundredths), which timestamps are checked against. */
const shownDuration = (file: BoxRecord) => (file.duration === null ? null : Math.round(file.duration * 100) / 100);

function checkTimestamps(file: BoxRecord, start: number | undefined, end: number | undefined): void {
  if (end !== undefined && start === undefined) {
    throw badRequest('audioTimestampEnd needs audioTimestamp: give the start of the range too.', [{ pointer: '#/audioTimestamp', detail: 'is required when audioTimestampEnd is given' }]);
  }
  if (start !== undefined && end !== undefined && end <= start) {
    throw badRequest(`audioTimestampEnd (${end}) must be greater than audioTimestamp (${start}).`, [{ pointer: '#/audioTimestampEnd', detail: 'must be greater than audioTimestamp' }]);
  }
  const duration = shownDuration(file);
  if (duration === null) return;
  for (const [field, value] of [['audioTimestamp', start], ['audioTimestampEnd', end]] as const) {
    if (value !== undefined && value > duration) {
      throw badRequest(`${field} (${value} s) is past the end of the file, which lasts ${duration} s.`, [{ pointer: `#/${field}`, detail: `must be at most ${duration}` }]);
    }
  }
}

/**
 * An insert or a reaction refers to a file, a parent or a comment that a
 * concurrent request may delete between our check and our write; the
 * foreign key then refuses it. Say what went, rather than answer 500.
 */
/**
 * Writes the event of a comment written or changed, in the transaction
 * `tx`, for the webhooks of the account that owns the project; the comment
 * is shown as that account sees it (`mine` is theirs).
 */
async function recordCommentEvent(ctx: Ports, tx: Store, type: 'comment.created' | 'comment.updated', file: BoxRecord, commentId: string): Promise<void> {
  const project = await tx.projects.get(file.projectId);
  const comment = await tx.comments.get(file.id, commentId);
  if (!project || !comment) return;
  const owner: Commenter = { userId: project.ownerId, sessionId: null, member: true, name: null, canModerate: true };
  const data = await oneJson(tx, owner, comment);
  await recordEvent(ctx, tx, { type, ownerId: project.ownerId, projectId: project.id, boxId: file.id, boxName: file.name, commentId, data });
}

async function orGone<T>(write: () => Promise<T>, gone: () => Promise<HttpProblem | undefined>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    const problem = await gone();
    throw problem ?? error;
  }
}

export async function createComment(ctx: Ports, commenter: Commenter, file: BoxRecord, body: Schemas['CreateCommentRequest']): Promise<Schemas['Comment']> {
  if (!commenter.member && commenter.name === null) throw nameRequired(commenter.playerId!);
  if (body.pinned === true && !commenter.canModerate) {
    throw forbidden('Only a project member who can write the project (owner, admin or editor) may pin a comment. Send it without pinned.');
  }
  checkTimestamps(file, body.audioTimestamp, body.audioTimestampEnd);
  const { store } = ctx;
  if (body.parentid !== undefined) {
    if (body.audioTimestamp !== undefined) {
      throw badRequest('A reply takes no timestamps of its own: it is about the moment of the comment it replies to. Send it without audioTimestamp and audioTimestampEnd.', [
        { pointer: '#/audioTimestamp', detail: 'must not be given with parentid' },
      ]);
    }
    const parent = await store.comments.get(file.id, body.parentid, scopeOf(commenter));
    if (!parent || parent.parentId !== null) {
      throw badRequest(`parentid ${body.parentid} is not a top-level comment on file ${file.id}. Replies go one level deep: reply to the comment it replies to.`, [
        { pointer: '#/parentid', detail: 'must name a top-level comment on the same file' },
      ]);
    }
  }
  const now = ctx.clock.now();
  const comment: CommentRecord = {
    id: newCommentId(),
    fileId: file.id,
    parentId: body.parentid ?? null,
    message: body.message,
    audioTimestamp: body.audioTimestamp ?? null,
    audioTimestampEnd: body.audioTimestampEnd ?? null,
    completed: body.completed ?? false,
    pinned: body.pinned ?? false,
    author: { kind: commenter.member ? 'member' : 'listener', userId: commenter.userId, sessionId: commenter.sessionId, name: commenter.member ? null : commenter.name },
    playerId: commenter.playerId ?? null,
    timeCreated: now,
    timeModified: now,
  };
  await orGone(
    () =>
      store.transaction(async (tx) => {
        await tx.comments.insert(comment);
        await recordCommentEvent(ctx, tx, 'comment.created', file, comment.id);
        await notifyOfComment(ctx, tx, file, comment);
      }),
    async () => {
      if (!(await store.boxes.get(file.projectId, file.id))) return notFound(`File ${file.id} was deleted.`);
      if (comment.parentId && !(await store.comments.get(file.id, comment.parentId))) {
        return badRequest(`parentid ${comment.parentId} was deleted.`, [{ pointer: '#/parentid', detail: 'must name a top-level comment on the same file' }]);
      }
      return undefined;
    },
  );
  return oneJson(store, commenter, (await store.comments.get(file.id, comment.id))!);
}

/**
 * Unicode's recommended emoji (UTS #51 "RGI_Emoji"), sequences included,
 * one per reaction. A RegExp of the `v` flag, which property-of-strings
 * escapes need (Node 20 has it); made by the constructor because the type
 * checker's target (ES2023) refuses the flag in a literal (TS1501).
 */
// biome-ignore lint/complexity/useRegexLiterals: the literal /…/v does not type-check below target ES2024.
const oneEmoji = new RegExp('^\\p{RGI_Emoji}$', 'v');

export async function updateComment(
  ctx: Ports,
  commenter: Commenter,
  file: BoxRecord,
  commentId: string,
  body: Schemas['UpdateCommentRequest'],
): Promise<Schemas['Comment']> {
  const { store } = ctx;
  const comment = await loadComment(store, file, commentId, commenter);
  const own = isAuthor(comment, commenter);
  // Every field is checked before anything changes: a request the caller may not make in full changes nothing.
  if (body.message !== undefined && !own) throw forbidden(`Only its author can change the message of comment ${commentId}.`);
  if (body.completed !== undefined && !own && !commenter.canModerate) {
    throw forbidden(`Only its author, or a member who can write the project, can mark comment ${commentId} done or not done.`);
  }
  if (body.pinned !== undefined && !commenter.canModerate) throw forbidden('Only a project member who can write the project (owner, admin or editor) may pin or unpin a comment.');
  for (const field of ['react', 'unreact'] as const) {
    const emoji = body[field];
    if (emoji !== undefined && !oneEmoji.test(emoji)) {
      throw badRequest(`${field} must be one emoji, such as 👍, 👍🏽 or 🇫🇷.`, [{ pointer: `#/${field}`, detail: 'must be one emoji (Unicode RGI_Emoji)' }]);
    }
  }
  if (body.react !== undefined && body.react === body.unreact) {
    throw badRequest('react and unreact name the same emoji; send one of them.', [{ pointer: '#/unreact', detail: 'must differ from react' }]);
  }
  const reactor = reactorOf(commenter);
  if ((body.react !== undefined || body.unreact !== undefined) && reactor === null) throw sessionRequired(commenter.playerId!);

  const now = ctx.clock.now();
  await orGone(
    () =>
      store.transaction(async (tx) => {
        const changes = { message: body.message, completed: body.completed, pinned: body.pinned };
        if (!(await tx.comments.update(file.id, commentId, changes, now))) throw notFound(`File ${file.id} has no comment ${commentId}.`);
        if (body.unreact !== undefined) await tx.comments.unreact(commentId, body.unreact, reactor!);
        if (body.react !== undefined) await tx.comments.react(commentId, body.react, reactor!, now);
        // Reactions alone are not worth an event: a partner cares for what the comment says and whether it is done.
        if (body.message !== undefined || body.completed !== undefined || body.pinned !== undefined) {
          await recordCommentEvent(ctx, tx, 'comment.updated', file, commentId);
        }
      }),
    async () => ((await store.comments.get(file.id, commentId)) ? undefined : notFound(`Comment ${commentId} was deleted.`)),
  );
  return oneJson(store, commenter, await loadComment(store, file, commentId, commenter));
}

export async function deleteComment(ctx: Ports, commenter: Commenter, file: BoxRecord, commentId: string): Promise<Record<string, never>> {
  const comment = await loadComment(ctx.store, file, commentId, commenter);
  if (!isAuthor(comment, commenter) && !commenter.canModerate) {
    throw forbidden(`Only its author, or a member who can write the project, can delete comment ${commentId}.`);
  }
  // Its replies and every reaction go with it (ON DELETE CASCADE). Gone already (a concurrent delete) is as good as deleted.
  await ctx.store.comments.delete(file.id, commentId);
  return {};
}
