/**
 * A listener's view of a player (getPlayerView): what this listener may see
 * and do there, and nothing more. Every URL in it is signed for this
 * listener's grant on this player (player-grants.ts), so the download
 * endpoint refuses it once the player stops allowing it.
 *
 * Its tracks (the bulk of it: 2,400 signed URLs for 200 tracks of 2
 * versions) are the same for every listener with the same grant, and are
 * kept, as JSON, by what decides them (view-tracks-cache.ts); the rest is
 * made for each request.
 */
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { BoxRecord } from '../boxes/box-repository.ts';
import type { ProjectRecord } from '../projects/project-repository.ts';
import type { PlayerRecord } from '../players/player-repository.ts';
import { downloadSigner, type Disposition, type Variant } from '../../signing/signed-downloads.ts';
import type { ListenerAccess } from './listener.ts';
import { viewTracksCache, type TracksEntry, type UploaderNames } from './view-tracks-cache.ts';
import { paywallHolds } from '../../auth/policy.ts';
import { playerFacts } from './player-facts.ts';
import { playerTrackGroups } from './player-tracks.ts';
import { holderOf, type PlayerGrant } from '../../signing/player-grant.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'signer'>;
type View = Schemas['PlayerView'];
type Quality = Schemas['Quality'];

/**
 * Platform loudness targets (integrated loudness, ITU-R BS.1770), as the
 * platforms publish or are reported to apply them.
 */
export const PLATFORM_TARGET_LUFS: Record<Schemas['LoudnessPlatform'], number> = {
  spotify: -14,
  'apple-music': -16,
  youtube: -14,
  tidal: -14,
  deezer: -15,
  'amazon-music': -14,
};
/** Without a target or a platform: −14 LUFS, the most common platform target. */
export const DEFAULT_TARGET_LUFS = -14;

/** The target in force: the player's own `targetLufs`, else its platform's, else −14 LUFS. */
export function targetLufsOf(options: Pick<Schemas['PlayerOptions'], 'targetLufs' | 'loudnessPlatform'>): number {
  return options.targetLufs ?? (options.loudnessPlatform ? PLATFORM_TARGET_LUFS[options.loudnessPlatform] : DEFAULT_TARGET_LUFS);
}

const isMember = (listener: ListenerAccess) => listener.principal.kind === 'user' || listener.principal.kind === 'collaborator';

/**
 * Whether the page plays the file as audio: analysed audio, or audio still
 * waiting for its analysis (files are `pending` only when they were uploaded
 * as audio). A file that is not audio is `ready` without an analysis; one
 * that failed to decode is `failed`: neither gets a stream.
 */
const playsAsAudio = (box: BoxRecord) => box.status === 'pending' || box.status === 'processing' || (box.status === 'ready' && box.audio !== null);

/**
 * A view, as the JSON (UTF-8) it is sent as, in pieces: what this listener
 * alone gets, around the tracks shared by every listener with the same grant
 * (sent as they are kept, never copied into one buffer per answer).
 */
export interface RenderedView {
  chunks: Buffer[];
}

export async function playerView(ctx: Ports, listener: ListenerAccess): Promise<RenderedView> {
  const { player, permissions } = listener;
  // Read before the boxes are (on a cache miss): its box_version keys the tracks, which are then at least as new as it.
  const project = await ctx.store.projects.get(player.projectId);

  const stream = permissions.has('player:stream');
  const download = permissions.has('player:download');
  const paid = listener.principal.kind === 'purchaser';
  // The buyer's own record of what they bought: the purchase their session made.
  const purchase = paid && listener.purchaseId ? await ctx.store.purchases.get(player.id, listener.purchaseId) : undefined;
  // A paywall holds something back from a link holder who has not paid: everything (`allow-access`) or the downloads it sells.
  const heldBack = paywallHolds(listener.principal, playerFacts(player)) !== undefined;
  // `original` is the uploaded master: streamed only to who may download it anyway. `lossless` decodes to the
  // master's samples: not while a paywall holds the files back (player:stream-lossless in the policy).
  const lossless = permissions.has('player:stream-lossless');
  const qualities: Quality[] = stream ? [...(download ? (['original'] as const) : []), ...(lossless ? (['lossless'] as const) : []), 'compressed'] : [];

  const grantFor = (grant: PlayerGrant['grant']): PlayerGrant => ({
    playerId: player.id,
    grant,
    holder: holderOf(listener.principal),
    // The purchase rides along only where it is what opened the player: a `customer` paywall.
    ...(paid && player.payment?.recipient === 'customer' && listener.purchaseId ? { purchaseId: listener.purchaseId } : {}),
  });
  const tracks = await viewTracks(ctx, { player, project, qualities, download, streamGrant: grantFor('stream'), downloadGrant: grantFor('download') });
  // Every URL in the view expires at urlsExpire, the tracks' (the artwork's is signed to match), which is then exactly "when the first signed URL stops working".
  const { urlsExpire } = tracks;

  const options = player.options;
  const defaultQuality = options.quality && qualities.includes(options.quality) ? options.quality : undefined;
  const head: Omit<View, 'tracks' | 'urlsExpire'> = {
    object: 'player-view',
    id: player.id,
    name: player.name,
    ...(project ? { projectName: project.name } : {}),
    color: player.color,
    ...(project?.artworkId ? { artwork: { url: downloadSigner(ctx, { disposition: 'inline', expires: urlsExpire })(project.artworkId), expires: urlsExpire } } : {}),
    serviceCTA: options.serviceCTA,
    access: {
      state: heldBack ? 'locked' : 'open',
      ...(heldBack ? { lock: 'paywall' as const } : {}),
      stream,
      download,
      comment: permissions.has('player:comment'),
      viewer: {
        kind: isMember(listener) ? 'member' : (listener.principal.kind as 'listener' | 'password' | 'purchaser'),
        ...(listener.displayName ? { name: listener.displayName } : {}),
        ...(isMember(listener) ? { canModerate: listener.canModerate } : {}),
      },
    },
    ...(player.payment
      ? {
          paywall: {
            price: player.payment.price,
            currency: 'usd' as const,
            fulfillment: player.payment.fulfillment,
            recipient: player.payment.recipient,
            paid,
            ...(purchase ? { purchase: { id: purchase.id, ...(purchase.receiptUrl ? { receiptUrl: purchase.receiptUrl } : {}), timeCreated: purchase.timeCreated } } : {}),
          },
        }
      : {}),
    options: {
      loudnessMatch: options.loudnessMatch,
      targetLufs: targetLufsOf(options),
      ...(options.loudnessPlatform ? { loudnessPlatform: options.loudnessPlatform } : {}),
      metadata: options.metadata,
      isrc: options.isrc,
      boxSubtitle: options.boxSubtitle,
    },
    qualities,
    ...(defaultQuality ? { defaultQuality } : {}),
  };
  // The head's JSON object, opened again to take the tracks and urlsExpire last, in the schema's order.
  return { chunks: [Buffer.from(`${JSON.stringify(head).slice(0, -1)},"tracks":`), tracks.json, Buffer.from(`,"urlsExpire":${JSON.stringify(urlsExpire)}}`)] };
}

/** What decides a view's tracks, besides the boxes: the player, and what the listener may do there under which grant. */
interface TracksShape {
  player: PlayerRecord;
  project: ProjectRecord | undefined;
  qualities: Quality[];
  download: boolean;
  streamGrant: PlayerGrant;
  downloadGrant: PlayerGrant;
}

/** The view's tracks as JSON, from the cache when what decides them is unchanged (view-tracks-cache.ts). */
async function viewTracks(ctx: Ports, shape: TracksShape): Promise<TracksEntry> {
  const { player, project, qualities, download, streamGrant } = shape;
  // Without its project (deleted under it), nothing versions the boxes: made every time.
  if (!project) return makeTracks(ctx, shape, ctx.clock.now());
  // The grant's player is the player's; its kind is fixed per URL kind, so the holder and the purchase are what vary.
  const key = JSON.stringify([player.id, player.version, project.boxVersion, qualities, download, streamGrant.holder, streamGrant.purchaseId ?? null]);
  return viewTracksCache(ctx.config).obtain(
    key,
    ctx.clock.now(),
    ctx.config.downloadUrlTtlMs,
    (entry) => sameUploaderNames(ctx, entry.uploaderNames),
    () => makeTracks(ctx, shape, ctx.clock.now()),
  );
}

async function makeTracks(ctx: Ports, { player, qualities, download, streamGrant, downloadGrant }: TracksShape, now: number): Promise<TracksEntry> {
  const boxes = await ctx.store.boxes.listProject(player.projectId);
  const groups = playerTrackGroups(player, boxes);
  const stream = qualities.length > 0;

  // One instant for all the tracks: every URL in them expires at urlsExpire.
  // A view of 200 tracks of 2 versions holds 2,400 URLs: each kind is prepared once (downloadSigner), and each URL costs one HMAC.
  const urlsExpire = now + ctx.config.downloadUrlTtlMs;
  const signedUrls = (grant: PlayerGrant, disposition: Disposition, variant: Variant | undefined) => downloadSigner(ctx, { disposition, variant, grant, expires: urlsExpire });
  const streamUrl = Object.fromEntries(qualities.map((quality) => [quality, signedUrls(streamGrant, 'inline', quality === 'original' ? undefined : quality)])) as Record<Quality, (id: string) => string>;
  const peaksJsonUrl = signedUrls(streamGrant, 'inline', 'peaks-json');
  const peaksDatUrl = signedUrls(streamGrant, 'attachment', 'peaks-dat');
  const downloadUrl = signedUrls(downloadGrant, 'attachment', undefined);

  const uploaderNames = await uploaderDisplayNames(ctx, player.options.boxSubtitle === 'artist' ? groups.map((group) => group.versions[0]) : []);
  const namesById = new Map(uploaderNames.filter((pair): pair is [string, string] => pair[1] !== undefined));

  const version = (box: BoxRecord): Schemas['ViewVersion'] => {
    const audio = box.status === 'ready' ? box.audio : null;
    const streams: Partial<Record<Quality, string>> = {};
    if (stream && playsAsAudio(box)) {
      for (const quality of qualities) {
        // The original plays from its own bytes; the renditions exist once the analysis made them (lossless only from lossless integer sources).
        const available = quality === 'original' || (audio?.renditions.includes(quality) ?? false);
        if (available) streams[quality] = streamUrl[quality](box.id);
      }
    }
    const tags = player.options.metadata && audio ? pick(audio.tags, ['title', 'artist', 'album']) : undefined;
    return {
      id: box.id,
      name: box.name,
      ...(box.versionName ? { versionName: box.versionName } : {}),
      status: box.status === 'awaiting-upload' || box.status === null ? 'pending' : box.status,
      ...(audio && box.duration !== null ? { duration: box.duration } : {}),
      ...(audio ? { loudness: { integratedLufs: audio.loudness.integratedLufs, truePeakDbtp: audio.loudness.truePeakDbtp } } : {}),
      ...(stream && audio
        ? {
            peaks: {
              json: peaksJsonUrl(box.id),
              dat: peaksDatUrl(box.id),
            },
          }
        : {}),
      ...(Object.keys(streams).length > 0 ? { streams } : {}),
      ...(download ? { download: { url: downloadUrl(box.id), filename: box.name } } : {}),
      ...(tags && Object.keys(tags).length > 0 ? { tags } : {}),
      ...(player.options.isrc && audio?.tags.isrc ? { isrc: audio.tags.isrc } : {}),
      timeCreated: box.timeCreated,
    };
  };

  const tracks: Schemas['ViewTrack'][] = groups.map(({ box, versions }) => {
    const subtitle = subtitleOf(versions[0], player.options.boxSubtitle, namesById);
    return { id: box.id, name: box.name, ...(subtitle ? { subtitle } : {}), versions: versions.map(version) };
  });
  return { json: Buffer.from(JSON.stringify(tracks)), urlsExpire, madeAt: now, uploaderNames };
}

function pick<T extends object, K extends keyof T>(value: T, keys: K[]): Partial<Pick<T, K>> {
  const picked: Partial<Pick<T, K>> = {};
  for (const key of keys) if (value[key] !== undefined) picked[key] = value[key];
  return picked;
}

/**
 * The interface on the players operations, boxSubtitle: "`artist` (the artist is the metadata artist on
 * the file; when absent, the file's uploader)": the uploader by their display
 * name, never anything of their email. `timestamp`: the upload's date.
 */
function subtitleOf(newest: BoxRecord, subtitle: Schemas['PlayerOptions']['boxSubtitle'], uploaderNames: Map<string, string>): string | undefined {
  if (subtitle === 'artist') return newest.audio?.tags.artist ?? (newest.uploaderId ? uploaderNames.get(newest.uploaderId) : undefined);
  if (subtitle === 'timestamp') return new Date(newest.timeCreated).toISOString().slice(0, 10);
  return undefined;
}

/**
 * The display names of the files' uploaders (users.name; an email is never
 * one), for each uploader consulted: undefined for one who set none.
 */
async function uploaderDisplayNames(ctx: Ports, boxes: BoxRecord[]): Promise<UploaderNames> {
  const ids = new Set(boxes.filter((box) => !box.audio?.tags.artist && box.uploaderId).map((box) => box.uploaderId!));
  const names: Array<[string, string | undefined]> = [];
  for (const id of ids) names.push([id, await displayNameOf(ctx, id)]);
  return names;
}

async function displayNameOf(ctx: Ports, userId: string): Promise<string | undefined> {
  const name = (await ctx.store.users.get(userId))?.name;
  return name?.trim() ? name : undefined;
}

/** Whether the uploaders' display names a cached view used are still theirs (they have no version to key it by). */
async function sameUploaderNames(ctx: Ports, names: UploaderNames): Promise<boolean> {
  for (const [id, name] of names) if ((await displayNameOf(ctx, id)) !== name) return false;
  return true;
}
