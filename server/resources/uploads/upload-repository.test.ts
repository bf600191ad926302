import { describe, expect, it } from 'vitest';
import { backends, useTestStore } from '../../testing/databases.ts';

describe.each(backends)('upload repository on %s', (backend) => {
  const t = useTestStore(backend);
  let count = 0;

  async function upload(expires = 1000) {
    const owner = await t.store.users.findOrCreate('owner@example.com', 1);
    const projectId = `prj_claims${++count}`;
    await t.store.projects.insert({ id: projectId, ownerId: owner.id, name: 'P', color: '#000000', sortBy: null, artworkId: null, timeCreated: 1, timeModified: 1 });
    const record = { id: `upl_${count}`, kind: 'file' as const, projectId, userId: owner.id, objectId: `box_${count}`, name: 'x', contentType: 'audio/wav', size: 1, metadata: { destination: 'file' }, expires, timeCreated: 1 };
    await t.store.uploads.insert(record);
    return record;
  }

  it('lets one token hold an upload until its deadline, then lets another take it over; only the holder renews, releases or completes', async () => {
    const { id } = await upload();
    expect(await t.store.uploads.claim(id, 'first', 10, 20)).toBe(true);
    expect(await t.store.uploads.get(id)).toMatchObject({ claimToken: 'first', claimExpires: 20, timeStarted: 10 });
    expect(await t.store.uploads.claim(id, 'second', 15, 25)).toBe(false);
    expect(await t.store.uploads.renew(id, 'first', 30)).toBe(true);
    expect(await t.store.uploads.claim(id, 'second', 30, 40)).toBe(false);
    // Stale once its deadline has passed.
    expect(await t.store.uploads.claim(id, 'second', 31, 41)).toBe(true);
    expect(await t.store.uploads.renew(id, 'first', 50)).toBe(false);
    expect(await t.store.uploads.release(id, 'first')).toBe(false);
    expect(await t.store.uploads.complete(id, 'first', 35)).toBe(false);
    expect(await t.store.uploads.get(id)).toMatchObject({ claimToken: 'second', timeCompleted: null });
    expect(await t.store.uploads.release(id, 'second')).toBe(true);
    expect(await t.store.uploads.get(id)).toMatchObject({ claimToken: null, claimExpires: null, timeStarted: null });
    expect(await t.store.uploads.claim(id, 'third', 36, 46)).toBe(true);
    expect(await t.store.uploads.complete(id, 'third', 37)).toBe(true);
    // An upload URL works once: a completed upload is never claimed again, however late.
    expect(await t.store.uploads.claim(id, 'fourth', 10_000, 10_010)).toBe(false);
    expect(await t.store.uploads.release(id, 'third')).toBe(false);
    expect(await t.store.uploads.get(id)).toMatchObject({ metadata: { destination: 'file' }, timeCompleted: 37, claimToken: null });
  });

  it('frees stale claims only, and lists as abandoned the expired uploads no live claim holds', async () => {
    const unclaimed = await upload(100);
    const stale = await upload(100);
    const live = await upload(100);
    const completed = await upload(100);
    const unexpired = await upload(10_000);
    await t.store.uploads.claim(stale.id, 'dead', 150, 190);
    await t.store.uploads.claim(live.id, 'alive', 150, 300);
    await t.store.uploads.claim(completed.id, 'done', 150, 300);
    await t.store.uploads.complete(completed.id, 'done', 160);
    await t.store.uploads.claim(unexpired.id, 'dead', 150, 190);
    const abandoned = (await t.store.uploads.listAbandoned(200)).map((record) => record.id);
    expect(abandoned).toEqual(expect.arrayContaining([unclaimed.id, stale.id]));
    expect(abandoned).not.toContain(live.id);
    expect(abandoned).not.toContain(completed.id);
    expect(abandoned).not.toContain(unexpired.id);
    expect(await t.store.uploads.releaseStale(200)).toBeGreaterThanOrEqual(2);
    for (const { id } of [stale, unexpired]) expect(await t.store.uploads.get(id)).toMatchObject({ claimToken: null });
    expect(await t.store.uploads.get(live.id)).toMatchObject({ claimToken: 'alive' });
    expect(await t.store.uploads.findByObject(live.objectId)).toMatchObject({ id: live.id });
    expect(await t.store.uploads.findByObject('box_none')).toBeUndefined();
  });
});
