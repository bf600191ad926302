/**
 * Large libraries and projects for the studio's bench and its tests, made through the store in one transaction each
 * (the repositories' own inserts, so every row is as the API would make it),
 * instead of thousands of HTTP calls:
 *
 * - a library: `projects` projects of the account, each holding a few
 *   analysed tracks (so that each one's size and last change are sums over
 *   real rows), every other one with artwork whose bytes are stored;
 * - a project of `boxes` boxes, as uploads make them: most tracks a stack
 *   of one analysed version, some stacks of three versions, and folders of
 *   tracks.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { analyseAudio } from '../audio/analyse.ts';
import { SystemMediaTools } from '../audio/media-tools.ts';
import type { BlobStore } from '../blobs/blob-store.ts';
import { artworkBlobKey } from '../blobs/keys.ts';
import type { Schemas } from '../lib/api-types.ts';
import { newId } from '../lib/ids.ts';
import type { Store } from '../repositories.ts';
import type { BoxRecord } from '../resources/boxes/box-repository.ts';
import { newBox } from '../resources/boxes/boxes-service.ts';

/** A 1×1 PNG: what the library's cards draw as artwork. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');

export interface Analysed {
  duration: number;
  audio: Schemas['AudioAnalysis'];
}

/** What the audio job makes of a 1-second 24-bit WAV of pink noise (ffmpeg makes it, the pipeline analyses it): every file's analysis. */
export async function analysedTake(): Promise<Analysed> {
  const dir = mkdtempSync(join(tmpdir(), 'studio-take-'));
  try {
    const wav = join(dir, 'take.wav');
    const made = spawnSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'anoisesrc=color=pink:amplitude=0.3:sample_rate=48000:duration=1', '-c:a', 'pcm_s24le', wav]);
    if (made.status !== 0) throw new Error(`ffmpeg failed: ${made.stderr}`);
    const { duration, audio } = await analyseAudio(new SystemMediaTools(), wav, mkdtempSync(join(dir, 'analyse-')), statSync(wav).size);
    return { duration, audio };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The boxes of one analysed track (a stack of `versions` files) under `parentId`, at `position`. */
function track(projectId: string, ownerId: string, name: string, parentId: string | null, position: number, versions: number, analysed: Analysed, now: number): BoxRecord[] {
  const stack = newBox({ projectId, kind: 'stack', name, parentId, position }, now);
  const files = Array.from({ length: versions }, (_, version) =>
    newBox(
      {
        projectId,
        kind: 'file',
        name: version === 0 ? `${name}.wav` : `${name} v${version + 1}.wav`,
        parentId: stack.id,
        position: version,
        status: 'ready',
        size: 288_044 + version,
        mimeType: 'audio/wav',
        duration: analysed.duration,
        audio: { ...analysed.audio, tags: { ...analysed.audio.tags, title: name } },
        uploaderId: ownerId,
      },
      now + version,
    ),
  );
  return [stack, ...files];
}

/** `count` projects of `ownerId`, created a minute apart, each with `tracks` tracks; every other one has artwork. */
export async function makeLibrary(store: Store, blobs: BlobStore, ownerId: string, count: number, tracks: number, analysed?: Analysed): Promise<string[]> {
  const start = Date.now() - count * 60_000;
  const ids: string[] = [];
  const artworks: Array<{ projectId: string; artworkId: string }> = [];
  await store.transaction(async (tx) => {
    for (let i = 0; i < count; i++) {
      const now = start + i * 60_000;
      const projectId = newId('prj');
      const artworkId = i % 2 === 0 ? newId('art') : null;
      await tx.projects.insert({ id: projectId, ownerId, name: `Project ${String(i + 1).padStart(4, '0')}`, color: '#3b82f6', sortBy: null, artworkId: null, timeCreated: now, timeModified: now });
      if (artworkId) {
        await tx.projects.insertArtwork({ id: artworkId, projectId, contentType: 'image/png', size: PNG.length, timeCreated: now });
        await tx.projects.update(projectId, { artworkId }, now);
        artworks.push({ projectId, artworkId });
      }
      for (let t = 0; t < tracks && analysed; t++) for (const box of track(projectId, ownerId, `Take ${t + 1}`, null, t, 1, analysed, now + t)) await tx.boxes.insert(box);
      ids.push(projectId);
    }
  });
  for (const { projectId, artworkId } of artworks) await blobs.write(artworkBlobKey(projectId, artworkId), Readable.from([PNG]), { expectedSize: PNG.length });
  return ids;
}

/**
 * One project of exactly `boxes` boxes: `folders` folders of 10 one-version
 * tracks each (21 boxes a folder), `stacks` stacks of three versions (4
 * boxes each), and the rest one-version tracks (2 boxes each; one lone file
 * if the count is odd).
 */
export async function makeBigProject(store: Store, ownerId: string, boxes: number, analysed: Analysed, { folders = 50, stacks = 150 } = {}): Promise<{ projectId: string; rows: number }> {
  const projectId = newId('prj');
  const now = Date.now() - boxes * 1000;
  const made: BoxRecord[] = [];
  let position = 0;
  for (let f = 0; f < folders; f++) {
    const folder = newBox({ projectId, kind: 'folder', name: `Session ${f + 1}`, parentId: null, position: position++ }, now + made.length);
    made.push(folder);
    for (let t = 0; t < 10; t++) made.push(...track(projectId, ownerId, `Session ${f + 1} idea ${t + 1}`, folder.id, t, 1, analysed, now + made.length));
  }
  for (let s = 0; s < stacks; s++) made.push(...track(projectId, ownerId, `Single ${s + 1}`, null, position++, 3, analysed, now + made.length));
  let tracks = 0;
  while (made.length + 2 <= boxes) made.push(...track(projectId, ownerId, `Track ${String(++tracks).padStart(5, '0')}`, null, position++, 1, analysed, now + made.length));
  if (made.length < boxes) {
    const [, file] = track(projectId, ownerId, 'Loose file', null, position++, 1, analysed, now + made.length);
    made.push({ ...file, parentId: null });
  }
  await store.transaction(async (tx) => {
    await tx.projects.insert({ id: projectId, ownerId, name: `${boxes.toLocaleString('en')} boxes`, color: '#3b82f6', sortBy: null, artworkId: null, timeCreated: now, timeModified: now });
    // One batch (multi-row INSERTs): the same rows as inserting the boxes one by one, in a fraction of the time.
    await tx.boxes.insertMany(made);
  });
  return { projectId, rows: folders + stacks + tracks + (made.length > folders * 21 + stacks * 4 + tracks * 2 ? 1 : 0) };
}
