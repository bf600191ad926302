import { describe, expect, it } from 'vitest';
import { backends, useTestStore } from '../../testing/databases.ts';
import { newId } from '../../lib/ids.ts';
import type { Store } from '../../repositories.ts';
import type { BoxRecord } from './box-repository.ts';
import { wholeListingReference } from './whole-listing-reference.ts';
import { newBox } from './boxes-service.ts';
import { buildListing, listingItems, type ListingReads, type ProjectListing } from './box-listing.ts';


/** The store's box reads, counting how often the whole project is read. */
function counted(store: Store) {
  const reads = { whole: 0 };
  const boxes: ListingReads = {
    listProject: (projectId, kind) => {
      reads.whole++;
      return store.boxes.listProject(projectId, kind);
    },
    listVersions: (projectId) => store.boxes.listVersions(projectId),
    getMany: (projectId, ids) => store.boxes.getMany(projectId, ids),
  };
  return { boxes, reads };
}

describe.each(backends)('the listing of all boxes, kept as bytes, on %s', (backend) => {
  const t = useTestStore(backend);

  /** A project of a folder of two tracks, a hidden folder holding a stack, a stack of two versions, and a loose file. */
  async function project() {
    const owner = await t.store.users.findOrCreate(`${newId('usr')}@example.com`, Date.now());
    const projectId = newId('prj');
    const now = Date.now();
    await t.store.projects.insert({ id: projectId, ownerId: owner.id, name: 'Listing', color: '#3b82f6', sortBy: null, artworkId: null, timeCreated: now, timeModified: now });
    let clock = now;
    const add = async (fields: Parameters<typeof newBox>[0]) => {
      const box = newBox(fields, clock++);
      await t.store.boxes.insert(box);
      return box;
    };
    const file = (name: string, parentId: string | null, position: number) =>
      add({ projectId, kind: 'file', name, parentId, position, status: 'ready', size: 1000, mimeType: 'audio/wav', duration: 61.234, audio: null, uploaderId: owner.id });
    const folder = await add({ projectId, kind: 'folder', name: 'Sessions', parentId: null, position: 0 });
    const trackA = await add({ projectId, kind: 'stack', name: 'Idea A', parentId: folder.id, position: 0 });
    const fileA = await file('Idea A.wav', trackA.id, 0);
    const trackB = await add({ projectId, kind: 'stack', name: 'Idea B', parentId: folder.id, position: 1 });
    const fileB = await file('Idea B.wav', trackB.id, 0);
    const hidden = await add({ projectId, kind: 'folder', name: 'Hidden', parentId: null, position: 1, hidden: true });
    const hiddenTrack = await add({ projectId, kind: 'stack', name: 'Kept back', parentId: hidden.id, position: 0 });
    await file('Kept back.wav', hiddenTrack.id, 0);
    const single = await add({ projectId, kind: 'stack', name: 'Single', parentId: null, position: 2 });
    const v1 = await file('Single.wav', single.id, 0);
    const v2 = await file('Single v2 ünïcode ✓.wav', single.id, 1);
    const loose = await file('Loose "quoted" <file>.wav', null, 3);
    return { projectId, folder, trackA, fileA, trackB, fileB, hidden, hiddenTrack, single, v1, v2, loose, file, add };
  }

  /** Changes a box as the service does: read it after taking the project's boxes, change it, save it. */
  const change = (projectId: string, id: string, edit: (box: BoxRecord) => void) =>
    t.store.transaction(async (store) => {
      await store.boxes.lockProject(projectId);
      const box = (await store.boxes.get(projectId, id))!;
      edit(box);
      await store.boxes.save(box);
    });

  it('rebuilds after every kind of write to the bytes of the whole answer, serialising only what changed', async () => {
    const p = await project();
    const { boxes, reads } = counted(t.store);
    let listing: ProjectListing = await buildListing(boxes, p.projectId);
    expect(listing.body.toString('utf8')).toBe(await wholeListingReference(t.store, p.projectId));
    expect(reads.whole).toBe(1);

    const writes: Array<[string, () => Promise<unknown>]> = [
      ['a file renamed (its stack names it)', () => change(p.projectId, p.fileA.id, (box) => (box.name = 'Idea A, renamed.wav'))],
      ['a version named', () => change(p.projectId, p.v2.id, (box) => (box.versionName = 'vocals up'))],
      ['a folder hidden', () => change(p.projectId, p.folder.id, (box) => (box.hidden = true))],
      ['a folder shown again', () => change(p.projectId, p.folder.id, (box) => (box.hidden = false))],
      ['a hidden folder renamed', () => change(p.projectId, p.hidden.id, (box) => (box.name = 'Still hidden'))],
      ['a stack moved out of a folder', () => change(p.projectId, p.trackB.id, (box) => Object.assign(box, { parentId: null, position: 4 }))],
      ['a stack reordered', () => change(p.projectId, p.v1.id, (box) => (box.position = 2))],
      ['a folder and its contents trashed', async () => t.store.boxes.setTrashed(p.projectId, await t.store.boxes.subtreeIds(p.folder.id), true, Date.now())],
      ['a file analysed', () => t.store.boxes.setProcessing(p.projectId, p.loose.id, { status: 'ready', duration: 12.5, audio: null }, Date.now())],
      ['a file added', () => p.file('New.wav', p.single.id, 3)],
      ['a folder added', () => p.add({ projectId: p.projectId, kind: 'folder', name: 'New folder', parentId: null, position: 5 })],
      ['a file deleted', () => t.store.boxes.delete(p.projectId, p.fileB.id)],
      ['a stack deleted while it holds a file (which goes to the top level)', () => t.store.boxes.delete(p.projectId, p.single.id)],
    ];
    for (const [what, write] of writes) {
      await write();
      listing = await buildListing(boxes, p.projectId, listing);
      expect(listing.body.toString('utf8'), what).toBe(await wholeListingReference(t.store, p.projectId));
    }
    expect(reads.whole).toBe(1);
    // The objects for pages and the validator are the body's JSON.
    expect(JSON.stringify(listingItems(listing))).toBe(listing.body.toString('utf8'));
  });

  it('rebuilds from a listing several writes old, and from one of the same version', async () => {
    const p = await project();
    const old = await buildListing(t.store.boxes, p.projectId);
    await change(p.projectId, p.loose.id, (box) => (box.name = 'Loose, renamed.wav'));
    await change(p.projectId, p.trackA.id, (box) => (box.name = 'Idea A, renamed'));
    await p.add({ projectId: p.projectId, kind: 'folder', name: 'Another', parentId: null, position: 6 });
    const rebuilt = await buildListing(t.store.boxes, p.projectId, old);
    expect(rebuilt.body.toString('utf8')).toBe(await wholeListingReference(t.store, p.projectId));
    expect((await buildListing(t.store.boxes, p.projectId, rebuilt)).body.equals(rebuilt.body)).toBe(true);
  });

  it('reads the whole project again when a write lands between its two reads, so that it never shows a mix of two moments', async () => {
    const p = await project();
    const { boxes, reads } = counted(t.store);
    const listing = await buildListing(boxes, p.projectId);
    await change(p.projectId, p.loose.id, (box) => (box.name = 'First rename.wav'));
    // Another request's write lands after the rebuild read the versions, before it reads the changed rows.
    const racing: ListingReads = {
      ...boxes,
      getMany: async (projectId, ids) => {
        await change(p.projectId, p.loose.id, (box) => (box.name = 'Second rename.wav'));
        return boxes.getMany(projectId, ids);
      },
    };
    const rebuilt = await buildListing(racing, p.projectId, listing);
    expect(reads.whole).toBe(2);
    expect(rebuilt.body.toString('utf8')).toBe(await wholeListingReference(t.store, p.projectId));
    expect(rebuilt.body.toString('utf8')).toContain('Second rename.wav');
  });

  it('reads the whole project again when many boxes changed', async () => {
    const p = await project();
    const { boxes, reads } = counted(t.store);
    const listing = await buildListing(boxes, p.projectId);
    for (let i = 0; i < 60; i++) await p.file(`Take ${i}.wav`, null, 10 + i);
    const rebuilt = await buildListing(boxes, p.projectId, listing);
    expect(reads.whole).toBe(2);
    expect(rebuilt.body.toString('utf8')).toBe(await wholeListingReference(t.store, p.projectId));
  });
});
