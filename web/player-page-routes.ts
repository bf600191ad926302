/**
 * The page a playerUrl opens (/p/:playerid): the player's tracks with the
 * project's artwork, each audio file playable in an HTML audio element, with
 * download links when the policy allows them. What the visitor may see and
 * do is the access policy's answer (server/auth/policy.ts), never a check of
 * its own. A collaborators-only player asks for a sign-in and then holds a
 * signed session cookie for that player alone (server/auth/player-session.ts).
 */
import express, { Router, type NextFunction, type Request, type Response } from 'express';
import { parse as parseCookies, serialize as serializeCookie } from 'cookie';
import type { Context } from '../server/context.ts';
import type { Config } from '../server/config.ts';
import { signDownload } from '../server/resources/downloads/signed-downloads.ts';
import type { BoxRecord } from '../server/resources/boxes/box-repository.ts';
import type { Schemas } from '../server/lib/api-types.ts';
import { forbidden } from '../server/http/problem.ts';
import { canOnPlayer, type Principal } from '../server/auth/policy.ts';
import { hasExpired, permissionsNow } from '../server/resources/listening/player-facts.ts';
import { playerVisitor } from '../server/auth/player-access.ts';
import { PlayerSessionSigner, SESSION_COOKIE, SESSION_TTL_MS } from '../server/auth/player-session.ts';
import { checkSameOrigin } from '../server/auth/same-origin.ts';
import { playerTracks } from './player-tracks.ts';
import { renderMessagePage, renderPlayerPage, renderSignInPage, type PageTrack, type SignInNotice } from './player-page-view.ts';
import { assetRoutes } from './page-assets.ts';
import { sendPage } from './page-security.ts';

/** The cookie the first version of this page kept a whole API token in; every visit that still sends it has it deleted. */
const LEGACY_TOKEN_COOKIE = 'as_token';

export function playerPageRoutes(ctx: Context): Router {
  const router = Router();
  const sessions = new PlayerSessionSigner(ctx.config.signingSecret);
  const visitorPorts = { users: ctx.store.users, projects: ctx.store.projects, sessions };

  router.use(assetRoutes());

  router.get('/p/:playerid', async (req: Request<{ playerid: string }>, res: Response) => {
    const base = basePath(ctx.config);
    forgetLegacyToken(req, res);
    const player = await ctx.store.players.get(req.params.playerid);
    if (!player) return sendPage(res, 404, notFoundPage(base));

    const cookies = parseCookies(req.headers.cookie ?? '');
    const visit = await playerVisitor(visitorPorts, player, cookies[SESSION_COOKIE], ctx.clock.now());
    if (visit.session === 'refused') res.append('Set-Cookie', sessionCookie(ctx.config, player.id, '', 0));
    // The policy's answer on the player as stored: a password locks it, and past its expiry nothing opens.
    const may = permissionsNow(visit.principal, player, ctx.clock.now());
    if (!may.has('player:view')) {
      if (!player.public) {
        const notice: SignInNotice = visit.session === 'refused' ? 'session-ended' : undefined;
        return sendPage(res, 401, renderSignInPage({ basePath: base, name: player.name, playerId: player.id, notice }));
      }
      if (hasExpired(player, ctx.clock.now())) {
        return sendPage(res, 410, renderMessagePage({ basePath: base, title: player.name, message: 'This link has expired. Ask its owner for a new one.' }));
      }
      if (player.passwordHash !== null) {
        return sendPage(res, 401, renderMessagePage({ basePath: base, title: player.name, message: 'This player is protected by a password.' }));
      }
      // Interface 4.1, payment `allow-access`: viewing is what the payment enables. Paying comes with the paywall issue.
      return sendPage(res, 402, renderMessagePage({ basePath: base, title: player.name, message: 'This player opens once it is paid for.' }));
    }

    const project = (await ctx.store.projects.get(player.projectId))!;
    const boxes = await ctx.store.boxes.listProject(player.projectId);
    const artwork = project.artworkId ? signDownload(ctx, project.artworkId, 'inline').url : undefined;
    const tracks: PageTrack[] = playerTracks(player, boxes).map((box) => ({
      id: box.id,
      name: box.versionName ? `${box.name} (${box.versionName})` : box.name,
      subtitle: subtitleOf(box, player.options.boxSubtitle),
      // Only what the page plays as audio gets an inline URL; anything else is offered as a download, if at all.
      streams: may.has('player:stream') && playsAsAudio(box) ? streamsFor(ctx, box, player.options.quality) : {},
      downloadUrl: may.has('player:download') ? signDownload(ctx, box.id, 'attachment').url : undefined,
    }));
    sendPage(res, 200, renderPlayerPage({ basePath: base, name: player.name, color: player.color, projectName: project.name, artwork, tracks }));
  });

  router.post(
    '/p/:playerid/session',
    // Before the body is read: a forged sign-in (login CSRF) is refused whatever it carries.
    sameOriginOnly(ctx.config),
    express.urlencoded({ extended: false, limit: '4kb' }),
    async (req: Request<{ playerid: string }>, res: Response) => {
      const base = basePath(ctx.config);
      forgetLegacyToken(req, res);
      const player = await ctx.store.players.get(req.params.playerid);
      if (!player) return sendPage(res, 404, notFoundPage(base));
      // Until the player issue brings invite links, a collaborator signs in with an API token. The token is checked
      // here and then forgotten: the cookie holds a session for this player, never the token.
      const token = typeof req.body?.token === 'string' ? req.body.token.trim() : '';
      const user = token ? await ctx.store.tokens.findActiveUser(token) : undefined;
      const role = user && (await ctx.store.projects.getWithRole(player.projectId, user))?.role;
      const principal: Principal | undefined = role ? { kind: 'collaborator', role } : undefined;
      if (!user || !principal || !canOnPlayer(principal, 'player:view', player)) {
        return sendPage(res, 401, renderSignInPage({ basePath: base, name: player.name, playerId: player.id, notice: 'token-refused' }));
      }
      const expires = ctx.clock.now() + SESSION_TTL_MS;
      res.append('Set-Cookie', sessionCookie(ctx.config, player.id, sessions.issue({ playerId: player.id, userId: user.id, expires }), SESSION_TTL_MS));
      // A path, not PUBLIC_URL: the form-action CSP and the cookie's path both hold for the origin the browser is on.
      res.redirect(303, `${base}/p/${encodeURIComponent(player.id)}`);
    },
  );

  return router;
}

/** The path PUBLIC_URL may carry (a server behind a prefix), without a trailing slash; '' at the root. */
const basePath = (config: Config) => new URL(config.publicUrl).pathname.replace(/\/+$/, '');

/**
 * The session cookie of one player, or its deletion (an empty value, no max
 * age). HttpOnly: no script reads it. SameSite=Lax rather than Strict: a
 * collaborator opens the player from a link in a mail or a chat, a cross-site
 * top-level navigation that Strict would send without the cookie, showing the
 * sign-in page to someone signed in; Lax still withholds it from every
 * cross-site POST and subresource, and the one POST here checks the origin
 * besides. Path: this player's page only. Secure when PUBLIC_URL is https.
 */
function sessionCookie(config: Config, playerId: string, value: string, ttlMs: number): string {
  return serializeCookie(SESSION_COOKIE, value, {
    httpOnly: true,
    sameSite: 'lax',
    secure: config.publicUrl.startsWith('https:'),
    path: `${basePath(config)}/p/${playerId}`,
    maxAge: Math.floor(ttlMs / 1000),
  });
}

/** Deletes the cookie in which the first version of this page kept a whole API token. */
function forgetLegacyToken(req: Request, res: Response) {
  if (parseCookies(req.headers.cookie ?? '')[LEGACY_TOKEN_COOKIE] === undefined) return;
  res.append('Set-Cookie', serializeCookie(LEGACY_TOKEN_COOKIE, '', { path: '/p/', httpOnly: true, sameSite: 'lax', maxAge: 0 }));
}

/** Refuses, with a 403 problem, a request that does not come from our own pages (see server/auth/same-origin.ts). */
function sameOriginOnly(config: Config) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const verdict = checkSameOrigin({ 'sec-fetch-site': req.get('sec-fetch-site'), origin: req.get('origin') }, new URL(config.publicUrl).origin);
    if (verdict.allowed) return next();
    next(forbidden(`Sign in from the player's own page: this sign-in was refused because ${verdict.reason}.`));
  };
}

const notFoundPage = (basePath: string) =>
  renderMessagePage({ basePath, title: 'Player not found', message: 'This link does not lead to a player. Check that it was copied whole.' });

/**
 * Whether the page plays the file as audio: an analysed audio file, or one
 * still waiting for its analysis (files are `pending` only when they were
 * uploaded as audio). A file that is not audio is `ready` without an
 * analysis; one that failed to decode is `failed`. Neither gets an inline URL.
 */
function playsAsAudio(box: BoxRecord): boolean {
  if (box.status === 'pending' || box.status === 'processing') return true;
  return box.status === 'ready' && box.audio !== null;
}

/**
 * Interface 4.1, boxSubtitle: "`artist` (the artist is the metadata artist on
 * the file; when absent, the file's uploader)". The uploader's display name
 * comes with the player issue; until then, no tag means no subtitle. Never
 * anything of an email address.
 */
function subtitleOf(box: BoxRecord, subtitle: Schemas['PlayerOptions']['boxSubtitle']): string {
  if (subtitle === 'artist') return box.audio?.tags?.artist ?? '';
  if (subtitle === 'timestamp') return new Date(box.timeCreated).toISOString().slice(0, 16).replace('T', ' ');
  return '';
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
