/**
 * Access to projects for the API's services, answered by the policy
 * (policy.ts). A caller without any role on a project is answered 404,
 * exactly as for a project that does not exist, so that its existence does
 * not leak; a caller who may read but not write is answered 403.
 */
import type { Role } from '../lib/api-types.ts';
import { forbidden, notFound } from '../lib/problems.ts';
import { canGrantRole, canOnProject, type Principal, type ProjectPermission } from './policy.ts';

export interface Caller {
  id: string;
  email: string;
}

/** The one query the check needs: a project (whatever the store's record of it is) and the caller's role on it. */
export interface ProjectRoles<Project> {
  getWithRole(projectId: string, user: Caller): Promise<{ project: Project; role: Role } | undefined>;
}

/**
 * Asks the policy whether the caller holds `permission` on the project, and
 * returns the project with the caller's role; throws the 404 or 403 problem
 * otherwise. Takes only the port it reads, for services that are handed
 * their ports rather than the whole context.
 */
export async function requireProjectAccess<Project>(
  projects: ProjectRoles<Project>,
  caller: Caller,
  projectId: string,
  permission: ProjectPermission,
): Promise<{ project: Project; role: Role }> {
  const access = await projects.getWithRole(projectId, caller);
  const principal: Principal = { kind: 'user', role: access?.role };
  if (!access || !canOnProject(principal, 'project:read')) throw notFound(`No project ${projectId} exists that you can see.`);
  if (!canOnProject(principal, permission)) {
    if (permission === 'project:sell') {
      throw forbidden(
        `Only the owner of project ${projectId} may set, change or remove a player's payment: its checkouts pay the owner's connected account. ` +
          `Your role is ${access.role}; leave payment out, or ask the project's owner to set it.`,
      );
    }
    if (permission === 'project:delete') {
      throw forbidden(`Only the owner of project ${projectId} may delete it. Your role is ${access.role}; ask the project's owner to delete it.`);
    }
    throw forbidden(`Your role on project ${projectId} is ${access.role}, which can only read. Ask the project's owner for the editor or admin role.`);
  }
  return access;
}

/** The services' entry point: `read`, `write`, `sell` (set a player's paywall) or `delete` on a project, through the policy. */
export function accessProject<Project>(
  ctx: { store: { projects: ProjectRoles<Project> } },
  caller: Caller,
  projectId: string,
  need: 'read' | 'write' | 'sell' | 'delete',
): Promise<{ project: Project; role: Role }> {
  const permission: ProjectPermission = `project:${need}`;
  return requireProjectAccess(ctx.store.projects, caller, projectId, permission);
}

/** Refuses to let someone of role `callerRole` grant `role` (policy.canGrantRole), saying what they may grant instead. */
export function requireGrantable(callerRole: Role, role: Role): void {
  if (!canGrantRole(callerRole, role)) throw forbidden(`Your role on this project is ${callerRole}: you may invite people as ${callerRole} or below, not as ${role}.`);
}
