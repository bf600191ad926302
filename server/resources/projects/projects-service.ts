import type { Context } from '../../context.ts';
import type { Role, Schemas } from '../../lib/api-types.ts';
import { newId } from '../../lib/ids.ts';
import { accessProject, type Caller } from '../../auth/access.ts';
import { signDownload } from '../downloads/signed-downloads.ts';
import type { ProjectRecord } from './project-repository.ts';

export const DEFAULT_PROJECT_COLOR = '#3b82f6';

export async function createProject(ctx: Context, caller: Caller, body: Schemas['CreateProjectRequest']): Promise<Schemas['Project']> {
  const now = ctx.clock.now();
  const project: ProjectRecord = {
    boxVersion: 0,
    id: newId('prj'),
    ownerId: caller.id,
    name: body.name,
    color: body.color ?? DEFAULT_PROJECT_COLOR,
    sortBy: body.sortBy ?? null,
    artworkId: null,
    timeCreated: now,
    timeModified: now,
  };
  await ctx.store.projects.insert(project);
  return projectJson(ctx, project, 'owner');
}

export async function getProject(ctx: Context, caller: Caller, projectId: string): Promise<Schemas['Project']> {
  const { project, role } = await accessProject(ctx, caller, projectId, 'read');
  return projectJson(ctx, project, role);
}

export async function listProjects(ctx: Context, caller: Caller): Promise<Schemas['Project'][]> {
  const projects = await ctx.store.projects.listForUser(caller);
  return Promise.all(projects.map((project) => projectJson(ctx, project, project.role)));
}

export async function updateProject(ctx: Context, caller: Caller, projectId: string, body: Schemas['UpdateProjectRequest']): Promise<Schemas['Project']> {
  const { role } = await accessProject(ctx, caller, projectId, 'write');
  await ctx.store.projects.update(projectId, body, ctx.clock.now());
  return projectJson(ctx, (await ctx.store.projects.get(projectId))!, role);
}

export async function projectJson(ctx: Context, project: ProjectRecord, role: Role): Promise<Schemas['Project']> {
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
