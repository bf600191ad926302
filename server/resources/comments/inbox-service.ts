/**
 * Comments across files (issue 21, the studio's inbox): a project's
 * comments, the inbox's comments over every project the caller can act on,
 * the files that portals hold, and the counts the navigation shows.
 *
 * The inbox covers the projects the caller owns and those where their role
 * writes the project (admin, editor): the roles that may mark any comment
 * done and move a portal's files out of its folder. A viewer reads a
 * project's comments through listProjectComments instead.
 */
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { compareKeys, type SortKey } from '../../lib/sort-keys.ts';
import { accessProject, type Caller } from '../../auth/access.ts';
import { canOnProject } from '../../auth/policy.ts';
import { boxJson } from '../boxes/boxes-service.ts';
import type { CommentOnTrack, CommentStatus } from './comment-repository.ts';
import { commentJson, reactorOf, type Commenter } from './comments-service.ts';

type Ports = Pick<Context, 'store'>;

/** A comment of a list across files: the Comment, with the track it is on. */
export type CommentWithTrack = Schemas['Comment'] & { track: Schemas['CommentTrack'] };

/** Open ones first, then newest first, then by id: the inbox's order. */
export const inboxOrder = (comment: CommentWithTrack): SortKey => [comment.completed ? 1 : 0, -comment.timeCreated, comment.id];

/** A member reading through the API: what `mine` is judged by. Nothing here writes, so the moderation flag is moot. */
const readerOf = (caller: Caller): Commenter => ({ userId: caller.id, sessionId: null, member: true, name: null, canModerate: false });

/** The projects the inbox covers: owned, or with a role that writes the project. */
export async function inboxProjectIds(ctx: Ports, caller: Caller): Promise<string[]> {
  const projects = await ctx.store.projects.listForUser(caller);
  return projects.filter((project) => canOnProject({ kind: 'user', role: project.role }, 'project:write')).map((project) => project.id);
}

async function commentsOn(ctx: Ports, caller: Caller, projectIds: string[], status: CommentStatus): Promise<CommentWithTrack[]> {
  const reader = readerOf(caller);
  const [comments, reactions] = await Promise.all([ctx.store.comments.listInProjects(projectIds, status), ctx.store.comments.reactionsInProjects(projectIds, reactorOf(reader))]);
  return comments.map((comment) => ({ ...commentJson(comment, reader, reactions.get(comment.id)), track: trackJson(comment) }));
}

function trackJson({ track }: CommentOnTrack): Schemas['CommentTrack'] {
  return {
    fileid: track.fileId,
    name: track.fileName,
    stackid: track.stackId,
    stackName: track.stackName,
    versionName: track.versionName,
    projectid: track.projectId,
    projectName: track.projectName,
  };
}

/** Every comment on the project's files (not in the trash), newest first: any member may read them. */
export async function listProjectComments(ctx: Ports, caller: Caller, projectId: string, status: CommentStatus): Promise<CommentWithTrack[]> {
  await accessProject(ctx, caller, projectId, 'read');
  return commentsOn(ctx, caller, [projectId], status);
}

/** Every comment on the inbox's projects, in the inbox's order (which paging keeps: a list asked for whole is sent as it is). */
export async function listInboxComments(ctx: Ports, caller: Caller, status: CommentStatus): Promise<CommentWithTrack[]> {
  const comments = await commentsOn(ctx, caller, await inboxProjectIds(ctx, caller), status);
  return comments.sort((a, b) => compareKeys(inboxOrder(a), inboxOrder(b)));
}

/** The files portals hold on the inbox's projects, newest first, each with its project. */
export async function listHeldFiles(ctx: Ports, caller: Caller): Promise<Schemas['HeldFile'][]> {
  const held = await ctx.store.portal.heldFiles(await inboxProjectIds(ctx, caller));
  const byProject = new Map<string, string[]>();
  for (const { projectId, boxId } of held) byProject.set(projectId, [...(byProject.get(projectId) ?? []), boxId]);
  const read = await Promise.all([...byProject].map(([projectId, ids]) => ctx.store.boxes.getMany(projectId, ids)));
  const boxes = new Map(read.flat().map((box) => [box.id, box]));
  return held.flatMap(({ boxId, projectId, projectName }) => {
    const box = boxes.get(boxId);
    // Deleted between the two reads: it is no longer held.
    return box ? [{ object: 'held_file' as const, projectid: projectId, projectName, file: boxJson(box) as Schemas['FileBox'] }] : [];
  });
}

/** The navigation's counts: open comments the caller did not write, and held files, over the inbox's projects. */
export async function inboxSummary(ctx: Ports, caller: Caller): Promise<Schemas['InboxSummary']> {
  const projectIds = await inboxProjectIds(ctx, caller);
  const [openComments, held] = await Promise.all([ctx.store.comments.countOpenInProjects(projectIds, caller.id), ctx.store.portal.heldFiles(projectIds)]);
  return { openComments, heldFiles: held.length };
}
