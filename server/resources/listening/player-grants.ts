/**
 * Signed URLs minted for a listener's view carry what they were minted
 * under: the player, the grant (`stream` to play or draw the waveform,
 * `download` to save the file), who the listener was taken for, and the
 * purchase that unlocked it. All of it is bound into the signature, and the
 * download endpoint asks `recheckGrant` before it sends a byte, so a URL
 * stops working as soon as the player no longer allows what it was made
 * for: the paywall put back, downloads switched off, the player made
 * collaborators-only, expired or deleted. Nothing else about the URL (its
 * expiry, its object) changes.
 */
import type { Context } from '../../context.ts';
import { canOnPlayer, type PlayerPermission, type Principal } from '../../auth/policy.ts';
import { hasExpired, playerFacts } from './player-facts.ts';
import { signatureRefused } from '../../lib/problems.ts';
import type { Variant } from '../../blobs/keys.ts';
import type { PlayerGrant } from '../../signing/player-grant.ts';
import { paidFor } from './listener.ts';

/**
 * Refuses (403) a URL whose player no longer allows what it was minted for.
 * A member's URL is checked against the player's options only: membership
 * itself is not in the URL, and a member who loses their role keeps such a
 * URL until it expires, as with any signed URL.
 */
export async function recheckGrant(ctx: Pick<Context, 'store' | 'clock'>, grant: PlayerGrant, variant: Variant | undefined): Promise<void> {
  const refused = (why: string) => signatureRefused(`This URL was made for player ${grant.playerId}, which no longer allows it: ${why}. Read the player's view again for current URLs.`);
  const player = await ctx.store.players.get(grant.playerId);
  if (!player) throw refused('the player was deleted');
  if (hasExpired(player, ctx.clock.now())) throw refused('its link has expired');
  const facts = playerFacts(player);
  const principal: Principal = grant.holder === 'member' ? { kind: 'collaborator', role: 'viewer' } : { kind: grant.holder };
  if (grant.holder === 'purchaser' && !(await paidFor(ctx, player, { purchaseId: grant.purchaseId }))) throw refused('its purchase is not on record');
  // A stream of the uploaded file itself (no variant) is the master: only for who may download it (without downloads the view streams renditions only).
  // The lossless rendition is the master's samples: only for who may play it losslessly (not while a paywall holds the files back).
  const needs: PlayerPermission =
    grant.grant === 'download' || (variant === undefined && grant.grant === 'stream') ? 'player:download' : variant === 'lossless' ? 'player:stream-lossless' : 'player:stream';
  if (!canOnPlayer(principal, needs, facts)) {
    throw refused(
      needs === 'player:download'
        ? 'downloading is not allowed there (now)'
        : needs === 'player:stream-lossless' && canOnPlayer(principal, 'player:stream', facts)
          ? 'lossless playing is not allowed there until its paywall is paid; the compressed stream plays'
          : 'playing is not allowed there (now)',
    );
  }
}
