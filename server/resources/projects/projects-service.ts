import type { Context } from '../../context.ts';
import type { Role, Schemas } from '../../lib/api-types.ts';
import { newId } from '../../lib/ids.ts';
import { accessProject, type Caller } from '../../auth/access.ts';
import { notFound } from '../../http/problem.ts';
import { signDownload } from '../../signing/signed-downloads.ts';
import type { ProjectRecord } from './project-repository.ts';
import { requireIfMatch, type IfMatch, type Versioned } from '../../http/preconditions.ts';
import { recordEvent } from '../webhooks/outbox.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'signer' | 'jobQueued'>;

export const DEFAULT_PROJECT_COLOR = '#3b82f6';

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
  return { body: json, version: project.version };
}

export async function getProject(ctx: Ports, caller: Caller, projectId: string): Promise<Versioned<Schemas['Project']>> {
  const { project, role } = await accessProject(ctx, caller, projectId, 'read');
  return { body: await projectJson(ctx, project, role), version: project.version };
}

export async function listProjects(ctx: Ports, caller: Caller): Promise<Schemas['Project'][]> {
  const projects = await ctx.store.projects.listForUser(caller);
  return Promise.all(projects.map((project) => projectJson(ctx, project, project.role)));
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
    requireIfMatch(ifMatch, current.version, `Project ${projectId}`, `GET /projects/${projectId}`);
    const updated = (await store.projects.update(projectId, body, ctx.clock.now()))!;
    // As its owner sees it, whoever changed it.
    await recordEvent(ctx, store, { type: 'project.updated', ownerId: updated.ownerId, projectId, data: await projectJson({ ...ctx, store }, updated, 'owner') });
    return updated;
  });
  return { body: await projectJson(ctx, project, role), version: project.version };
}

export async function projectJson(ctx: Ports, project: ProjectRecord, role: Role): Promise<Schemas['Project']> {
  const artwork = project.artworkId ? await ctx.store.projects.getArtwork(project.artworkId) : undefined;
  return {
    id: project.id,
    object: 'project',
    name: project.name,
    color: project.color,
    role,
    ...(project.sortBy ? { sortBy: project.sortBy } : {}),
    ...(artwork ? { artwork: { ...signDownload(ctx, artwork.id, 'inline'), contentType: artwork.contentType } } : {}),
    timeCreated: project.timeCreated,
    timeModified: project.timeModified,
  };
}
