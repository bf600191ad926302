/**
 * Listener insights: plays reported by player pages (recordPlay), downloads
 * counted as the download endpoint serves them, purchases of the paywall,
 * read back by who manages the player (getPlayerInsights).
 *
 * A listener is kept as who they are and the name they go by: a signed-in
 * listener as their account (and its name), a guest as a digest of their
 * player session's id (and the display name they gave), else as Anonymous.
 * Nothing else about them is kept or sent anywhere: no address, user agent,
 * session id or fingerprint, and no third party is called.
 */
import { createHash } from 'node:crypto';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Caller } from '../../auth/access.ts';
import { badRequest, conflict, forbidden, notFound } from '../../lib/problems.ts';
import type { PlayerGrant } from '../../signing/player-grant.ts';
import type { Listener } from '../listening/listener.ts';
import { playerTracks } from '../listening/player-tracks.ts';
import { loadPlayer } from '../players/players-service.ts';

/** The issue: "a play counts once 3 seconds of a track have been heard". */
export const PLAY_COUNTS_AFTER_SECONDS = 3;
/** How far past the duration a report may go: a page's clock and the decoder's idea of the end differ by a little. */
export const PLAY_SLACK_SECONDS = 10;
const ANONYMOUS = 'Anonymous';

type Ports = Pick<Context, 'store' | 'clock'>;

/** A guest's key: a digest of the session's id, so that insights keep no id a session or a comment carries (migration 31). */
const guestKey = (sessionId: string) => `guest:${createHash('sha256').update(sessionId).digest('base64url')}`;

/**
 * Issue 28: "Listeners must be told apart by who they are (account id for
 * members, player-session id for guests), never by the display name they
 * chose." A display name is typed by whoever opens a session, so a guest
 * may type a member's: the account decides for a signed-in listener, the
 * session for a guest. Without a name the listener is Anonymous (null),
 * as the spec has it: everyone without a display name is one listener.
 */
export function listenerKeyOf(listener: Pick<Listener, 'userId' | 'sessionId' | 'displayName'>): string | null {
  if (!listener.displayName) return null;
  if (listener.userId) return `account:${listener.userId}`;
  return listener.sessionId ? guestKey(listener.sessionId) : null;
}

/**
 * The id a listener's rows carry: a digest of the player and the key, so
 * that it tells listeners apart on this player without being an account's
 * id or a session's, nor the same for one listener on two players.
 */
function listenerIdOf(playerId: string, key: string | null): string {
  return `lsn_${createHash('sha256').update(`${playerId}\n${key ?? 'anonymous'}`).digest('base64url').slice(0, 22)}`;
}

/**
 * Records a report of a play, for a listener the view opens for (the caller
 * resolved them with resolveListener, under the view's own decision). The
 * file must be one the view offers to play: among its tracks, and the view
 * may stream.
 */
export async function recordPlay(ctx: Ports, listener: Listener, body: Schemas['RecordPlayRequest']): Promise<Schemas['Play']> {
  const playerId = listener.player.id;
  if (!listener.permissions.has('player:stream')) {
    throw forbidden(`Player ${playerId} does not let this listener play its tracks (see access.stream in its view), so there is no play to report.`);
  }
  if (!listener.fileIds.has(body.fileid)) throw notFound(`No file ${body.fileid} is among the tracks of player ${playerId}; report plays of the versions its view lists.`);
  const file = listener.projectBoxes.find((box) => box.id === body.fileid)!;
  // Bounded by the duration once the analysis knows it; before that, by the schema's maximum only.
  const duration = file.status === 'ready' && file.audio ? file.duration : null;
  if (duration !== null) {
    const limit = duration + PLAY_SLACK_SECONDS;
    const over = (['heard', 'position'] as const).filter((field) => body[field] > limit);
    if (over.length > 0) {
      throw badRequest(
        `The file is ${duration.toFixed(2)} s long: ${over.join(' and ')} may be at most ${limit.toFixed(2)} s (its duration plus ${PLAY_SLACK_SECONDS} s).`,
        over.map((field) => ({ pointer: `/${field}`, detail: `At most ${limit.toFixed(2)} seconds.` })),
      );
    }
  }
  const now = ctx.clock.now();
  const listenerKey = listenerKeyOf(listener);
  // A renewed session (formerSessionIds) is the listener who played under its former ids: a guest who then gave the
  // password, paid, or took an invite (and is now their account) stays one listener, not two.
  if (listenerKey) await ctx.store.insights.rekey(playerId, (listener.formerSessionIds ?? []).map(guestKey), listenerKey);
  const kept = await ctx.store.insights.recordPlay({
    playerId,
    playId: body.playid,
    fileId: body.fileid,
    listenerName: listenerKey ? listener.displayName! : null,
    listenerKey,
    heard: body.heard,
    position: body.position,
    timeCreated: now,
    timeModified: now,
  });
  if (kept.fileId !== body.fileid) throw conflict(`The play ${body.playid} is of another file; make a new playid for every play of a track.`);
  return { object: 'play', playid: kept.playId, fileid: kept.fileId, heard: kept.heard, position: kept.position, counted: kept.heard >= PLAY_COUNTS_AFTER_SECONDS };
}

/**
 * Counts a download through a player's view: a URL whose grant is
 * `download` (only the view's download URLs carry one), when its bytes are
 * sent from the start. The file is the URL's object; one that is no box
 * (never, for a download grant) counts nothing.
 */
export async function countDownload(ctx: Pick<Context, 'store' | 'logger'>, grant: PlayerGrant | undefined, objectId: string): Promise<void> {
  if (grant?.grant !== 'download') return;
  try {
    await ctx.store.insights.countDownload(grant.playerId, objectId);
  } catch (error) {
    // The count is for the owner's insights; the listener still gets their file.
    ctx.logger.error('a download through a player could not be counted', { playerId: grant.playerId, err: error });
  }
}

/**
 * The player's insights, for its owner and the project's members who may
 * manage players (the need of updatePlayer: owner, admin, editor); a viewer
 * gets 403, anyone else 404, as loadPlayer answers.
 */
export async function playerInsights(ctx: Context, caller: Caller, playerId: string): Promise<Schemas['PlayerInsights']> {
  const player = await loadPlayer(ctx, caller, playerId, 'write');
  const [tallies, downloads, purchases, boxes] = await Promise.all([
    ctx.store.insights.tallyPlays(player.id, PLAY_COUNTS_AFTER_SECONDS),
    ctx.store.insights.downloads(player.id),
    ctx.store.purchases.listPlayer(player.id),
    ctx.store.boxes.listProject(player.projectId),
  ]);
  const byId = new Map(boxes.map((box) => [box.id, box]));
  // The files the player shows now, in page order, then any other file played or downloaded through it before.
  const shown = playerTracks(player, boxes).map((box) => box.id);
  const earlier = [...new Set([...tallies.map((tally) => tally.fileId), ...downloads.keys()])].filter((id) => !shown.includes(id) && byId.has(id));
  earlier.sort((a, b) => byId.get(a)!.name.localeCompare(byId.get(b)!.name));

  const byMostPlays = <T extends { plays: number; name: string; listenerid: string }>(a: T, b: T) =>
    b.plays - a.plays || a.name.localeCompare(b.name) || a.listenerid.localeCompare(b.listenerid);
  // The rows of two listeners of one name differ by `listenerid` (the same in `tracks` and `listeners`) and `signedIn`.
  const listenerOf = (key: string | null, name: string | null) => ({
    listenerid: listenerIdOf(player.id, key),
    name: key === null ? ANONYMOUS : (name ?? ANONYMOUS),
    anonymous: key === null,
    signedIn: key?.startsWith('account:') ?? false,
  });

  // Across tracks by who the listener is (the key), never by name; under the name of their latest play.
  const everyone = new Map<string | null, Schemas['InsightsListener']>();
  for (const tally of tallies) {
    const seen = everyone.get(tally.listenerKey);
    if (seen) {
      seen.plays += tally.plays;
      if (tally.timeLastPlayed > seen.timeLastPlayed) Object.assign(seen, { name: listenerOf(tally.listenerKey, tally.listenerName).name, timeLastPlayed: tally.timeLastPlayed });
    } else {
      everyone.set(tally.listenerKey, { ...listenerOf(tally.listenerKey, tally.listenerName), plays: tally.plays, timeLastPlayed: tally.timeLastPlayed });
    }
  }
  const tracks: Schemas['InsightsTrack'][] = [...shown, ...earlier].map((fileId) => {
    const box = byId.get(fileId)!;
    const duration = box.status === 'ready' && box.audio && box.duration !== null ? box.duration : undefined;
    const listeners = tallies
      .filter((tally) => tally.fileId === fileId)
      .map((tally) => ({
        // One listener goes by one name in every row: the one `listeners` gives them.
        ...listenerOf(tally.listenerKey, everyone.get(tally.listenerKey)!.name),
        plays: tally.plays,
        farthest: tally.farthest,
        ...(duration ? { fraction: Math.min(1, tally.farthest / duration) } : {}),
        timeLastPlayed: tally.timeLastPlayed,
      }))
      .sort(byMostPlays);
    return {
      fileid: fileId,
      name: box.name,
      ...(duration !== undefined ? { duration } : {}),
      plays: listeners.reduce((sum, listener) => sum + listener.plays, 0),
      downloads: downloads.get(fileId) ?? 0,
      listeners,
    };
  });

  const listeners = [...everyone.values()].sort(byMostPlays);
  // A purchase recorded without an amount (records tests insert) counts, for nothing.
  const amount = purchases.reduce((sum, purchase) => sum + (purchase.amount ?? 0), 0);

  return {
    object: 'player-insights',
    playerid: player.id,
    totals: {
      plays: listeners.reduce((sum, listener) => sum + listener.plays, 0),
      listeners: listeners.length,
      downloads: [...downloads.values()].reduce((sum, count) => sum + count, 0),
      purchases: purchases.length,
      amount,
    },
    tracks,
    listeners,
    purchases: { count: purchases.length, amount, currency: 'usd' },
  };
}
