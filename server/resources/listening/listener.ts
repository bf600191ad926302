/**
 * Who is on the other end of a listener operation (the view, the session,
 * comments on a player), and what the access policy lets them do there: the
 * one place the listener operations resolve a request into a principal, as
 * `accessProject` is for the API's. Every player-scoped handler starts here.
 *
 * The principal comes from, in this order: a bearer token (a project member,
 * by role), the player's session cookie (an invited collaborator, a password
 * session, a purchaser, a listener with a display name), or nothing (anyone
 * with the link).
 */
import type { Request } from 'express';
import type { Context } from '../../context.ts';
import type { PlayerRecord } from '../players/player-repository.ts';
import type { PlayerPermission, Principal } from '../../auth/policy.ts';
import { HttpProblem } from '../../http/problem.ts';

export interface Listener {
  player: PlayerRecord;
  principal: Principal;
  /** What the policy grants this principal on this player now (player:view, :stream, :download, :comment). */
  permissions: ReadonlySet<PlayerPermission>;
  /** The API user behind a bearer token or a collaborator's session; absent for anonymous listeners. */
  userId?: string;
  /** The player session's id, when a session cookie opened this request: what listener writes are attributed to and rate limited by. */
  sessionId?: string;
  /** The display name comments are posted under: the user's name, or the name given to the session. */
  displayName?: string;
  /** A member whose role can write the player's project: may pin, complete and delete any comment. */
  canModerate: boolean;
  /** The ids of the file boxes (versions) this player shows this listener, under its scope and `stacks` rule. */
  fileIds: ReadonlySet<string>;
}

/**
 * Resolves the request into a Listener of the player, or throws the problem
 * the spec gives: 404 (no such player), 410 (expired), 401 `player-locked`
 * (collaborators only or a password, without a session that opens it).
 */
export async function resolveListener(_ctx: Context, _req: Request, _playerId: string): Promise<Listener> {
  throw new HttpProblem(501, 'not-implemented', 'Listener resolution is being built.');
}
