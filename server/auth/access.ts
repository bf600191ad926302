/**
 * Who may do what on a project. Owners, and collaborators by role: admin and
 * editor write, viewer reads. Anyone else is answered 404, exactly as for a
 * project that does not exist, so that its existence does not leak.
 */
import type { Context } from '../context.ts';
import type { Role } from '../lib/api-types.ts';
import { forbidden, notFound } from '../http/problem.ts';
import { canWrite, type ProjectRecord } from '../resources/projects/project-repository.ts';

export interface Caller {
  id: string;
  email: string;
}

export async function accessProject(ctx: Context, caller: Caller, projectId: string, need: 'read' | 'write'): Promise<{ project: ProjectRecord; role: Role }> {
  const access = await ctx.store.projects.getWithRole(projectId, caller);
  if (!access) throw notFound(`No project ${projectId} exists that you can see.`);
  const { project, role } = access;
  if (need === 'write' && !canWrite(role)) {
    throw forbidden(`Your role on project ${projectId} is ${role}, which can only read. Ask the project's owner for the editor or admin role.`);
  }
  return { project, role };
}
