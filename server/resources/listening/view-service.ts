/**
 * A listener's view of a player (getPlayerView): what this listener may see
 * and do there, and nothing more. Every URL in it is signed for this
 * listener's grant on this player (player-grants.ts), so the download
 * endpoint refuses it once the player stops allowing it.
 */
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { BoxRecord } from '../boxes/box-repository.ts';
import { downloadSigner, type Disposition, type Variant } from '../../signing/signed-downloads.ts';
import type { Listener } from './listener.ts';
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

const isMember = (listener: Listener) => listener.principal.kind === 'user' || listener.principal.kind === 'collaborator';

/**
 * Whether the page plays the file as audio: analysed audio, or audio still
 * waiting for its analysis (files are `pending` only when they were uploaded
 * as audio). A file that is not audio is `ready` without an analysis; one
 * that failed to decode is `failed`: neither gets a stream.
 */
const playsAsAudio = (box: BoxRecord) => box.status === 'pending' || box.status === 'processing' || (box.status === 'ready' && box.audio !== null);

export async function playerView(ctx: Ports, listener: Listener): Promise<View> {
  const { player, permissions } = listener;
  const project = await ctx.store.projects.get(player.projectId);
  const groups = playerTrackGroups(player, listener.projectBoxes);

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
  // One instant for the whole view: every URL in it expires at urlsExpire, which is then exactly "when the first signed URL stops working".
  // A view of 200 tracks of 2 versions holds 2,400 URLs: each kind is prepared once (downloadSigner), and each URL costs one HMAC.
  const urlsExpire = ctx.clock.now() + ctx.config.downloadUrlTtlMs;
  const signedUrls = (grant: PlayerGrant | undefined, disposition: Disposition, variant: Variant | undefined) =>
    downloadSigner(ctx, { disposition, variant, grant, expires: urlsExpire });
  const streamGrant = grantFor('stream');
  const downloadGrant = grantFor('download');
  const streamUrl = Object.fromEntries(qualities.map((quality) => [quality, signedUrls(streamGrant, 'inline', quality === 'original' ? undefined : quality)])) as Record<Quality, (id: string) => string>;
  const peaksJsonUrl = signedUrls(streamGrant, 'inline', 'peaks-json');
  const peaksDatUrl = signedUrls(streamGrant, 'attachment', 'peaks-dat');
  const downloadUrl = signedUrls(downloadGrant, 'attachment', undefined);

  const uploaderNames = await uploaderDisplayNames(ctx, player.options.boxSubtitle === 'artist' ? groups.map((group) => group.versions[0]) : []);

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
    const subtitle = subtitleOf(versions[0], player.options.boxSubtitle, uploaderNames);
    return { id: box.id, name: box.name, ...(subtitle ? { subtitle } : {}), versions: versions.map(version) };
  });

  const options = player.options;
  const defaultQuality = options.quality && qualities.includes(options.quality) ? options.quality : undefined;
  return {
    object: 'player-view',
    id: player.id,
    name: player.name,
    ...(project ? { projectName: project.name } : {}),
    color: player.color,
    ...(project?.artworkId ? { artwork: { url: signedUrls(undefined, 'inline', undefined)(project.artworkId), expires: urlsExpire } } : {}),
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
    tracks,
    urlsExpire,
  };
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

/** The display names of the files' uploaders who set one (users.name); an email is never one. */
async function uploaderDisplayNames(ctx: Ports, boxes: BoxRecord[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  const ids = new Set(boxes.filter((box) => !box.audio?.tags.artist && box.uploaderId).map((box) => box.uploaderId!));
  for (const id of ids) {
    const name = (await ctx.store.users.get(id))?.name;
    if (name?.trim()) names.set(id, name);
  }
  return names;
}
