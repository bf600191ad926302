/**
 * What a link preview may show of a player: the Open Graph and Twitter card
 * tags of the page a playerUrl opens. A chat app or a search engine fetches
 * that page without any session, so the preview says only what anyone with
 * the link may see: for a public player without a password, its name, its
 * project and its artwork; for any other, nothing beyond that it is a player.
 */
import type { Context } from '../../context.ts';
import { signDownload } from '../../signing/signed-downloads.ts';
import { hasExpired } from './player-facts.ts';

export interface PlayerPreview {
  /** The page's HTTP status: 404 with no such player, 410 past its expiry, else 200. */
  status: 200 | 404 | 410;
  title: string;
  description: string;
  /** A signed artwork URL (it expires like every signed URL; previews are fetched when the link is shared). */
  image?: string;
}

/** common.yaml#/Id: "minLength: 1, maxLength: 64"; a longer id names no player, and is not looked up. */
const MAX_ID_LENGTH = 64;

export async function playerPreview(ctx: Pick<Context, 'store' | 'clock' | 'config' | 'signer'>, playerId: string): Promise<PlayerPreview> {
  const player = playerId.length <= MAX_ID_LENGTH ? await ctx.store.players.get(playerId) : undefined;
  if (!player) return { status: 404, title: 'Player not found', description: 'This link does not lead to a player.' };
  if (hasExpired(player, ctx.clock.now())) return { status: 410, title: 'This link has expired', description: 'Ask its owner for a new one.' };
  if (!player.public || player.passwordHash !== null) return { status: 200, title: 'A private player', description: 'Open the link to listen.' };
  const project = await ctx.store.projects.get(player.projectId);
  return {
    status: 200,
    title: player.name,
    description: project ? `${project.name} · listen, compare versions and comment` : 'Listen, compare versions and comment',
    image: project?.artworkId ? signDownload(ctx, project.artworkId, 'inline').url : undefined,
  };
}
