import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../store/store.ts';
import { backends, createTestDatabase, type TestDatabase } from '../testing/databases.ts';

describe.each(backends)('job queue on %s', (backend) => {
  let database: TestDatabase;
  let store: Store;
  beforeAll(async () => {
    database = await createTestDatabase(backend);
    store = await openStore(database);
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });
  // Each test starts with an empty queue.
  const drain = () => store.db.execute('DELETE FROM jobs');

  it('hands a due job to one worker, with a lease, and not before it is due', async () => {
    await drain();
    const id = await store.jobs.enqueue('kind', { n: 1 }, { now: 1000 });
    expect(await store.jobs.claim('w1', 999, 100)).toBeUndefined();
    const job = await store.jobs.claim('w1', 1000, 100);
    expect(job).toMatchObject({ id, kind: 'kind', payload: { n: 1 }, attempts: 1, leaseUntil: 1100 });
    expect(await store.jobs.claim('w2', 1050, 100)).toBeUndefined();
    await store.jobs.complete(job!, 1060);
    expect(await store.jobs.get(id)).toMatchObject({ status: 'done' });
    expect(await store.jobs.claim('w2', 5000, 100)).toBeUndefined();
  });

  it('gives a job whose lease ran out to another worker, and a lease kept alive to nobody else', async () => {
    await drain();
    const id = await store.jobs.enqueue('kind', {}, { now: 0 });
    const first = (await store.jobs.claim('crashed', 10, 100))!;
    expect(await store.jobs.extend(first, 'crashed', 300)).toBe(true);
    expect(await store.jobs.claim('other', 200, 100)).toBeUndefined();
    const second = await store.jobs.claim('other', 301, 100);
    expect(second).toMatchObject({ id, attempts: 2 });
    // The crashed worker has lost it.
    expect(await store.jobs.extend(first, 'crashed', 1000)).toBe(false);
  });

  it('retries a failed job at the time given, or fails it for good', async () => {
    await drain();
    const id = await store.jobs.enqueue('kind', {}, { now: 0 });
    const job = (await store.jobs.claim('w', 0, 100))!;
    await store.jobs.fail(job, 'passing trouble', 10, 500);
    expect(await store.jobs.claim('w', 499, 100)).toBeUndefined();
    const again = (await store.jobs.claim('w', 500, 100))!;
    expect(again.attempts).toBe(2);
    await store.jobs.fail(again, 'for good', 600, undefined);
    expect(await store.jobs.get(id)).toEqual({ status: 'failed', attempts: 2, lastError: 'for good' });
    expect(await store.jobs.claim('w', 10_000, 100)).toBeUndefined();
  });

  it('never hands one job to two workers claiming at once', async () => {
    await drain();
    for (let i = 0; i < 20; i++) await store.jobs.enqueue('kind', { i }, { now: 0 });
    const claims = await Promise.all(Array.from({ length: 40 }, (_, i) => store.jobs.claim(`w${i}`, 1, 60_000)));
    const ids = claims.filter(Boolean).map((job) => job!.id);
    expect(ids.length).toBe(20);
    expect(new Set(ids).size).toBe(20);
  });
});
