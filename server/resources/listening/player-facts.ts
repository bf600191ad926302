/**
 * What the access policy needs to know of a stored player (policy.ts
 * PlayerFacts), in one place, so that every caller (the listener
 * resolution, the signed URLs' re-check, the old player page) asks the
 * policy about the same player: its password counts, and an expired player
 * grants nothing.
 */
import { playerPermissions, type PlayerFacts, type PlayerPermission, type Principal } from '../../auth/policy.ts';
import type { PlayerRecord } from '../players/player-repository.ts';

export function playerFacts(player: PlayerRecord): PlayerFacts {
  return { public: player.public, options: player.options, payment: player.payment, hasPassword: player.passwordHash !== null };
}

export const hasExpired = (player: Pick<PlayerRecord, 'expires'>, now: number) => player.expires !== null && player.expires <= now;

/** The principal's permissions on the player now: none once it has expired. */
export function permissionsNow(principal: Principal, player: PlayerRecord, now: number): Set<PlayerPermission> {
  return hasExpired(player, now) ? new Set() : playerPermissions(principal, playerFacts(player));
}
