/**
 * What a signed URL minted for a listener's view carries of its player: the
 * grant (`stream` or `download`), who the listener was taken for, and the
 * purchase that unlocked it, bound into the signature and sent in the query.
 * The download endpoint re-checks it against the player
 * (resources/listening/player-grants.ts) before it sends a byte.
 */
import type { Principal } from '../auth/policy.ts';

export type GrantKind = 'stream' | 'download';
/** Who the URL's listener was taken for: a member (by token or collaborator session), or one of the link holders. */
export type GrantHolder = 'member' | 'listener' | 'password' | 'purchaser';

export interface PlayerGrant {
  playerId: string;
  grant: GrantKind;
  holder: GrantHolder;
  /** The purchase that made the holder a purchaser on a `customer` paywall. */
  purchaseId?: string;
}

export const GRANT_KINDS: readonly GrantKind[] = ['stream', 'download'];
export const GRANT_HOLDERS: readonly GrantHolder[] = ['member', 'listener', 'password', 'purchaser'];

export const holderOf = (principal: Principal): GrantHolder => (principal.kind === 'user' || principal.kind === 'collaborator' ? 'member' : principal.kind);

/** The grant's values, as bound into the signature and sent in the query (names the download endpoint's spec gives). */
export function grantQuery(grant: PlayerGrant): Record<string, string> {
  return { player: grant.playerId, grant: grant.grant, as: grant.holder, ...(grant.purchaseId ? { purchase: grant.purchaseId } : {}) };
}
