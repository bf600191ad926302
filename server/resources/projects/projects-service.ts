import type { Context } from '../../context.ts';
import type { Role, Schemas } from '../../lib/api-types.ts';
import { newId } from '../../lib/ids.ts';
import { accessProject, type Caller } from '../../auth/access.ts';
import { projectAbilities } from '../../auth/policy.ts';
import { notFound } from '../../lib/problems.ts';
import { signDownload } from '../../signing/signed-downloads.ts';
import type { ProjectContent, ProjectFilter, ProjectRecord } from './project-repository.ts';
import { compareKeys, newestFirst, type SortKey } from '../../lib/sort-keys.ts';
import { projectBlobPrefix } from '../../blobs/keys.ts';
import { portalUploadDir, removePartialUpload } from '../../blobs/partial-uploads.ts';
import { requireIfMatch, type IfMatch, type Versioned } from '../../http/preconditions.ts';
import { recordEvent } from '../webhooks/outbox.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'signer' | 'jobQueued'>;

export const DEFAULT_PROJECT_COLOR = '#3b82f6';

/**
 * The version a project's ETag shows. Its representation changes with the project's own fields (version) and with its
 * boxes (box_version, bumped by every box write: they make its size and timeModified), and both only go up, so their sum
 * changes with every change of what GET answers: RFC 9110 §8.8.3, a strong validator "changes value whenever a change
 * occurs to the representation data". An upload must not leave a cache (or a browser revalidating with If-None-Match)
 * holding the old size.
 */
const representationVersion = (project: ProjectRecord) => project.version + project.boxVersion;

export async function createProject(ctx: Ports, caller: Caller, body: Schemas['CreateProjectRequest']): Promise<Versioned<Schemas['Project']>> {
  const now = ctx.clock.now();
  const project: ProjectRecord = {
    boxVersion: 0,
    version: 1,
    id: newId('prj'),
    ownerId: caller.id,
    name: body.name,
    color: body.color ?? DEFAULT_PROJECT_COLOR,
    sortBy: body.sortBy ?? null,
    artworkId: null,
    timeCreated: now,
    timeModified: now,
  };
  const json = await projectJson(ctx, project, 'owner');
  await ctx.store.transaction(async (store) => {
    await store.projects.insert(project);
    await recordEvent(ctx, store, { type: 'project.created', ownerId: project.ownerId, projectId: project.id, data: json });
  });
  return { body: json, version: representationVersion(project) };
}

export async function getProject(ctx: Ports, caller: Caller, projectId: string): Promise<Versioned<Schemas['Project']>> {
  const { project, role } = await accessProject(ctx, caller, projectId, 'read');
  return { body: await projectJson(ctx, project, role), version: representationVersion(project) };
}

/** The orders of listProjects' `sort`. */
export type ProjectOrder = 'created' | 'modified';

/** Cuts a sorted list to the page a request asks for (http/paging.ts pageOf, bound to the request). */
export type Pager = <T>(items: T[], keyOf: (item: T) => SortKey) => T[];

/** The last change of the project or of any of its boxes: what a library sorts and shows by. */
const lastChange = (project: ProjectRecord, content: ProjectContent) => Math.max(project.timeModified, content.boxesModified ?? 0);

/** Most recently changed first, then by id (projects.yaml, listProjects `sort=modified`). */
const changedFirst = (project: ProjectRecord): SortKey => [-lastChange(project, project.content!), project.id];

/**
 * Every project the caller may see, or with `filter` only those they own
 * (`mine`) or those shared with them (`shared`), in the order `sort` names,
 * cut to the page `page` asks for. The list is one query (each project's
 * role, content and artwork with it), and only the page's projects are
 * made into JSON: a first page of 50 signs at most 50 artwork URLs, not
 * one per project.
 */
export async function listProjects(ctx: Ports, caller: Caller, query: { filter?: ProjectFilter; sort?: ProjectOrder }, page: Pager): Promise<Schemas['Project'][]> {
  const projects = await ctx.store.projects.listForUser(caller, query.filter ?? 'all');
  const keyOf = query.sort === 'modified' ? changedFirst : newestFirst;
  // Whole (no limit, no cursor) as paged: in the order asked for. The store reads them newest first.
  if (query.sort === 'modified') projects.sort((a, b) => compareKeys(keyOf(a), keyOf(b)));
  const shown = page(projects, keyOf);
  return Promise.all(shown.map((project) => projectJson(ctx, project, project.role)));
}

/**
 * Changes only the fields given. The update is one statement that bumps the
 * version; with If-Match, the version is checked in the same transaction,
 * with the project's row locked, so nothing lands in between.
 */
export async function updateProject(
  ctx: Ports,
  caller: Caller,
  projectId: string,
  body: Schemas['UpdateProjectRequest'],
  ifMatch?: IfMatch,
): Promise<Versioned<Schemas['Project']>> {
  const { role } = await accessProject(ctx, caller, projectId, 'write');
  const project = await ctx.store.transaction(async (store) => {
    const current = await store.projects.getForUpdate(projectId);
    if (!current) throw notFound(`No project ${projectId} exists that you can see.`);
    requireIfMatch(ifMatch, representationVersion(current), `Project ${projectId}`, `GET /projects/${projectId}`);
    const updated = (await store.projects.update(projectId, body, ctx.clock.now()))!;
    // As its owner sees it, whoever changed it.
    await recordEvent(ctx, store, { type: 'project.updated', ownerId: updated.ownerId, projectId, data: await projectJson({ ...ctx, store }, updated, 'owner') });
    return updated;
  });
  return { body: await projectJson(ctx, project, role), version: representationVersion(project) };
}

/**
 * Deletes the project with everything in it (owner only). The records go in
 * one transaction, with the `project.deleted` event; the bytes (files,
 * renditions, artwork, and the partial bytes of portal uploads under way)
 * after it commits, since nothing points at them any more: a failure there
 * leaves bytes the blob sweep removes later, never a project without its
 * bytes. An upload PUT under way finds its upload gone and keeps nothing.
 */
export async function deleteProject(ctx: Ports & Pick<Context, 'blobs' | 'logger'>, caller: Caller, projectId: string, ifMatch?: IfMatch): Promise<Record<string, never>> {
  await accessProject(ctx, caller, projectId, 'delete');
  const deleted = await ctx.store.transaction(async (store) => {
    // Locked first, as every box write takes it: no upload or move lands in the project while it goes.
    const project = await store.projects.getForUpdate(projectId);
    if (!project) throw notFound(`No project ${projectId} exists that you can see.`);
    // RFC 9110 §13.1.1, If-Match: "the server MUST NOT perform the requested method" when the condition fails: a delete
    // decided on the version read is not applied to one that has changed since (issue 30: a stale tag deleted a project).
    requireIfMatch(ifMatch, representationVersion(project), `Project ${projectId}`, `GET /projects/${projectId}`);
    const data = await projectJson({ ...ctx, store }, project, 'owner');
    const removed = (await store.projects.delete(projectId))!;
    await recordEvent(ctx, store, { type: 'project.deleted', ownerId: project.ownerId, projectId, data });
    return removed;
  });
  const keys: string[] = [];
  try {
    for await (const key of ctx.blobs.list(projectBlobPrefix(projectId))) keys.push(key);
  } catch (error) {
    ctx.logger.error('listing the bytes of a deleted project failed; the blob sweep removes them later', { err: error, projectId });
  }
  for (const key of keys) {
    await ctx.blobs.delete(key).catch((error: unknown) => ctx.logger.warn('removing a blob of a deleted project failed; the blob sweep removes it later', { err: error, key }));
  }
  for (const uploadId of deleted.unfinishedPortalUploads) {
    await removePartialUpload(portalUploadDir(ctx.config.dataDir), uploadId).catch((error: unknown) => ctx.logger.warn('removing the partial bytes of a portal upload failed', { err: error, uploadId }));
  }
  return {};
}

export async function projectJson(ctx: Ports, project: ProjectRecord, role: Role): Promise<Schemas['Project']> {
  // A listing joined the artwork's content type (artworkContentType); a project read alone reads its artwork here.
  const artwork = !project.artworkId
    ? undefined
    : project.artworkContentType !== undefined
      ? project.artworkContentType === null
        ? undefined
        : { id: project.artworkId, contentType: project.artworkContentType }
      : await ctx.store.projects.getArtwork(project.artworkId);
  const content = project.content ?? (await ctx.store.projects.content(project.id));
  return {
    id: project.id,
    object: 'project',
    name: project.name,
    color: project.color,
    role,
    // What that role may do, from the policy itself: the studio and other clients show a control by it, not by `role`.
    abilities: projectAbilities(role),
    ...(project.sortBy ? { sortBy: project.sortBy } : {}),
    ...(artwork ? { artwork: { ...signDownload(ctx, artwork.id, 'inline'), contentType: artwork.contentType } } : {}),
    size: content.size,
    timeCreated: project.timeCreated,
    timeModified: lastChange(project, content),
  };
}
