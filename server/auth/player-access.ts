/**
 * Who is looking at a player page: the principal the policy is asked about.
 * A valid session cookie for this player whose user still has a role on the
 * player's project is a collaborator; anyone else is a public listener.
 */
import type { Role } from '../lib/api-types.ts';
import type { Caller, ProjectRoles } from './access.ts';
import type { Principal } from './policy.ts';
import type { PlayerSessionSigner } from './player-session.ts';

export interface PlayerAccessPorts {
  users: { get(id: string): Promise<Caller | undefined> };
  projects: ProjectRoles;
  sessions: PlayerSessionSigner;
}

export interface PlayerVisit {
  principal: Principal;
  /**
   * `none`: no session cookie was sent. `valid`: it opened a collaborator's
   * session. `refused`: one was sent but is malformed, forged, expired, for
   * another player, or its user no longer has a role on the project.
   */
  session: 'none' | 'valid' | 'refused';
}

export async function playerVisitor(
  ports: PlayerAccessPorts,
  player: { id: string; projectId: string },
  sessionCookie: string | undefined,
  now: number,
): Promise<PlayerVisit> {
  const listener: Principal = { kind: 'listener' };
  if (sessionCookie === undefined) return { principal: listener, session: 'none' };
  const role = await sessionRole(ports, player, sessionCookie, now);
  return role ? { principal: { kind: 'collaborator', role }, session: 'valid' } : { principal: listener, session: 'refused' };
}

async function sessionRole(ports: PlayerAccessPorts, player: { id: string; projectId: string }, cookie: string, now: number): Promise<Role | undefined> {
  const session = ports.sessions.verify(cookie, player.id, now);
  if (!session) return undefined;
  const user = await ports.users.get(session.userId);
  if (!user) return undefined;
  return (await ports.projects.getWithRole(player.projectId, user))?.role;
}
