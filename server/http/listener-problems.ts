/**
 * The problems only listener operations answer (RFC 9457), with their own
 * types and the `lock` extension member of a 401. They extend HttpProblem so
 * the one error handler writes them, headers included.
 */
import { HttpProblem } from '../lib/problems.ts';
import type { EntryLock } from '../auth/policy.ts';

type ListenerProblemType = 'player-locked' | 'player-expired' | 'password-incorrect' | 'invite-invalid';

export class ListenerProblem extends HttpProblem {
  readonly listenerType: ListenerProblemType;

  constructor(
    listenerType: ListenerProblemType,
    detail: string,
    members: Record<string, string> = {},
    headers?: Record<string, string>,
  ) {
    super(listenerType, detail, { members, ...(headers ? { headers } : {}) });
    this.listenerType = listenerType;
  }
}

export type Lock = 'collaborators' | 'password';

/**
 * 401 with the lock. RFC 9110 §15.5.2: "The server generating a 401 response
 * MUST send a WWW-Authenticate header field containing at least one challenge
 * applicable to the target resource." The challenge names our own scheme: the
 * credential is a player session, not a bearer token.
 */
export function playerLocked(playerId: string, lock: Lock, detail: string): ListenerProblem {
  return new ListenerProblem('player-locked', detail, { lock }, { 'WWW-Authenticate': `PlayerSession realm="${playerId}"` });
}

export function playerExpired(expires: number): ListenerProblem {
  const day = new Date(expires).toISOString().slice(0, 10);
  return new ListenerProblem('player-expired', `This player's link expired on ${day}. Ask its owner for a new one.`);
}

export const passwordIncorrect = (detail = "That is not this player's password. Check it and try again.") => new ListenerProblem('password-incorrect', detail);

export const inviteInvalid = () =>
  new ListenerProblem('invite-invalid',
    "This invite link does not open this player: it was used already, replaced by a newer one, or revoked. Ask the player's owner for a new link.",
  );

/** The problem of the lock the policy named (decideEntry), in words that say what to do. */
export function entryRefused(player: { id: string; expires: number | null }, lock: EntryLock): ListenerProblem {
  switch (lock) {
    case 'expired':
      return playerExpired(player.expires!);
    case 'collaborators':
      return playerLocked(player.id, 'collaborators', 'This player is for its invited collaborators only. Open it with the invite link its owner sent you.');
    case 'password':
      return playerLocked(player.id, 'password', 'This player has a password. Give it to open the player.');
  }
}
