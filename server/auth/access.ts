/**
 * Access to projects for the API's services, answered by the policy
 * (policy.ts). A caller without any role on a project is answered 404,
 * exactly as for a project that does not exist, so that its existence does
 * not leak; a caller who may read but not write is answered 403.
 */
import type { Role } from '../lib/api-types.ts';
import { forbidden } from '../lib/problems.ts';
import { canGrantRole, type ProjectPermission } from './policy.ts';
import { actorOf, authorize } from './authorize.ts';

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
  // The policy's answer, with its refusal from authorize's one table: 404 without a role (as for a project that does
  // not exist), 403 when the role cannot.
  authorize(actorOf(caller, undefined), { permission, project: { id: projectId, role: access?.role } });
  // authorize refused a project the caller has no role on, a missing one included.
  return access!;
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

/**
 * accessProject, for a caller who may already know the project's owner (read with what they came for, as a player
 * read reads it with the player, in one statement): the project's owner is its `owner`, answered by the same policy
 * without a query; anyone else is asked of the store as accessProject asks. `ownerId` must be the owner_id of the
 * project row, read in the same statement as what it guards.
 */
export async function accessProjectOwnedBy(
  ctx: { store: { projects: ProjectRoles<unknown> } },
  caller: Caller,
  projectId: string,
  ownerId: string | null,
  need: 'read' | 'write' | 'sell' | 'delete',
): Promise<{ role: Role }> {
  if (ownerId !== caller.id) return accessProject(ctx, caller, projectId, need);
  authorize(actorOf(caller, undefined), { permission: `project:${need}`, project: { id: projectId, role: 'owner' } });
  return { role: 'owner' };
}

/** Refuses to let someone of role `callerRole` grant `role` (policy.canGrantRole), saying what they may grant instead. */
export function requireGrantable(callerRole: Role, role: Role): void {
  if (!canGrantRole(callerRole, role)) throw forbidden(`Your role on this project is ${callerRole}: you may invite people as ${callerRole} or below, not as ${role}.`);
}
