/**
 * The page a playerUrl opens (/p/:playerid): the player's tracks with the
 * project's artwork, each playable in an HTML audio element, with download
 * links when the player allows downloads. A collaborators-only player asks
 * for an access token first and keeps it in an HttpOnly cookie.
 */
import express, { Router, type Request, type Response } from 'express';
import type { Context } from '../server/context.ts';
import { signDownload } from '../server/resources/downloads/signed-downloads.ts';
import { playerTracks } from './player-tracks.ts';
import type { BoxRecord } from '../server/resources/boxes/box-repository.ts';
import type { Schemas } from '../server/lib/api-types.ts';
import type { PageTrack } from './player-page-view.ts';
import { renderPlayerPage, renderMessagePage, renderSignInPage } from './player-page-view.ts';

const COOKIE = 'as_token';

export function playerPageRoutes(ctx: Context): Router {
  const router = Router();

  router.get('/p/:playerid', async (req: Request<{ playerid: string }>, res: Response) => {
    const player = await ctx.store.players.get(req.params.playerid);
    if (!player) return sendHtml(res, 404, renderMessagePage('Player not found', 'This link does not lead to a player. Check that it was copied whole.'));
    if (!player.public && !(await isInvited(ctx, req, player.projectId))) {
      return sendHtml(res, 401, renderSignInPage(player.name, req.params.playerid, readCookie(req) !== undefined));
    }
    const project = (await ctx.store.projects.get(player.projectId))!;
    const boxes = await ctx.store.boxes.listProject(player.projectId);
    const artwork = project.artworkId ? signDownload(ctx, project.artworkId, 'inline').url : undefined;
    const uploaders = new Map<string, string>();
    for (const id of new Set(boxes.map((box) => box.uploaderId).filter((id): id is string => !!id))) {
      const user = await ctx.store.users.get(id);
      if (user) uploaders.set(id, user.email.split('@')[0]);
    }
    const tracks = playerTracks(player, boxes).map((box) => ({
      id: box.id,
      name: box.versionName ? `${box.name} (${box.versionName})` : box.name,
      // Interface 4.1, boxSubtitle "artist": "the metadata artist on the file; when absent, the file's uploader".
      subtitle:
        player.options.boxSubtitle === 'artist'
          ? (box.uploaderId && uploaders.get(box.uploaderId)) || ''
          : player.options.boxSubtitle === 'timestamp'
            ? new Date(box.timeCreated).toISOString().slice(0, 16).replace('T', ' ')
            : '',
      mimeType: box.mimeType ?? 'application/octet-stream',
      streams: streamsFor(ctx, box, player.options.quality),
      downloadUrl: player.options.downloads ? signDownload(ctx, box.id, 'attachment').url : undefined,
    }));
    res.setHeader('Cache-Control', 'private, no-store');
    sendHtml(res, 200, renderPlayerPage({ name: player.name, color: player.color, projectName: project.name, artwork, tracks }));
  });

  router.post('/p/:playerid/session', express.urlencoded({ extended: false, limit: '4kb' }), async (req: Request<{ playerid: string }>, res: Response) => {
    const token = typeof req.body?.token === 'string' ? req.body.token.trim() : '';
    const secure = ctx.config.publicUrl.startsWith('https:') ? '; Secure' : '';
    res.setHeader('Set-Cookie', `${COOKIE}=${encodeURIComponent(token)}; Path=/p/; HttpOnly; SameSite=Lax; Max-Age=2592000${secure}`);
    res.redirect(303, `/p/${encodeURIComponent(req.params.playerid)}`);
  });

  return router;
}

/**
 * What the page may play, by quality. Interface 2.1: `quality` is the
 * player's default playback quality; when it is absent, "the frontend then
 * plays at the highest quality the listener's connection allows", so the page
 * gets every quality the file has and picks one from the connection.
 */
function streamsFor(ctx: Context, box: BoxRecord, quality: Schemas['Quality'] | undefined): PageTrack['streams'] {
  const available = box.audio?.renditions ?? ['original'];
  const url = (variant: Schemas['Quality']) => signDownload(ctx, box.id, 'inline', variant === 'original' ? undefined : variant).url;
  if (quality && available.includes(quality)) return { [quality]: url(quality) };
  // A set quality the file lacks (a lossless player, a lossy file) falls back to the original bytes.
  if (quality) return { original: url('original') };
  return Object.fromEntries(available.map((variant) => [variant, url(variant)]));
}

/** Whether the request's token cookie belongs to the project's owner or an invited collaborator. */
async function isInvited(ctx: Context, req: Request, projectId: string): Promise<boolean> {
  const token = readCookie(req);
  if (!token) return false;
  const user = await ctx.store.tokens.findActiveUser(token);
  return !!user && (await ctx.store.projects.roleOf(projectId, user)) !== undefined;
}

function readCookie(req: Request): string | undefined {
  for (const part of (req.get('cookie') ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === COOKIE && value.length > 0) return decodeURIComponent(value.join('=')) || undefined;
  }
  return undefined;
}

function sendHtml(res: Response, status: number, html: string) {
  res.status(status).type('html').send(html);
}
