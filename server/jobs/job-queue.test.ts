import { describe, expect, it } from 'vitest';
import { backends, useTestStore } from '../testing/databases.ts';

describe.each(backends)('job queue on %s', (backend) => {
  const t = useTestStore(backend);
  // Each test starts with an empty queue.
  const drain = () => t.store.db.execute('DELETE FROM jobs');

  it('hands a due job to one worker, with a lease, and not before it is due', async () => {
    await drain();
    const id = await t.store.jobs.enqueue('kind', { n: 1 }, { now: 1000 });
    expect(await t.store.jobs.claim('w1', 999, 100, ['kind'])).toBeUndefined();
    const job = await t.store.jobs.claim('w1', 1000, 100, ['kind']);
    expect(job).toMatchObject({ id, kind: 'kind', payload: { n: 1 }, attempts: 1, leaseUntil: 1100 });
    expect(await t.store.jobs.claim('w2', 1050, 100, ['kind'])).toBeUndefined();
    await t.store.jobs.complete(job!, 1060);
    expect(await t.store.jobs.get(id)).toMatchObject({ status: 'done' });
    expect(await t.store.jobs.claim('w2', 5000, 100, ['kind'])).toBeUndefined();
  });

  it('gives a job whose lease ran out to another worker, and a lease kept alive to nobody else', async () => {
    await drain();
    const id = await t.store.jobs.enqueue('kind', {}, { now: 0 });
    const first = (await t.store.jobs.claim('crashed', 10, 100, ['kind']))!;
    expect(await t.store.jobs.extend(first, 300)).toBe(true);
    expect(await t.store.jobs.claim('other', 200, 100, ['kind'])).toBeUndefined();
    const second = await t.store.jobs.claim('other', 301, 100, ['kind']);
    expect(second).toMatchObject({ id, attempts: 2 });
    // The crashed worker has lost it.
    expect(await t.store.jobs.extend(first, 1000)).toBe(false);
  });

  it('retries a failed job at the time given, or fails it for good', async () => {
    await drain();
    const id = await t.store.jobs.enqueue('kind', {}, { now: 0 });
    const job = (await t.store.jobs.claim('w', 0, 100, ['kind']))!;
    await t.store.jobs.fail(job, 'passing trouble', 10, 500);
    expect(await t.store.jobs.claim('w', 499, 100, ['kind'])).toBeUndefined();
    const again = (await t.store.jobs.claim('w', 500, 100, ['kind']))!;
    expect(again.attempts).toBe(2);
    await t.store.jobs.fail(again, 'for good', 600, undefined);
    expect(await t.store.jobs.get(id)).toEqual({ status: 'failed', attempts: 2, lastError: 'for good' });
    expect(await t.store.jobs.claim('w', 10_000, 100, ['kind'])).toBeUndefined();
  });

  it('never hands one job to two workers claiming at once', async () => {
    await drain();
    for (let i = 0; i < 20; i++) await t.store.jobs.enqueue('kind', { i }, { now: 0 });
    const claims = await Promise.all(Array.from({ length: 40 }, (_, i) => t.store.jobs.claim(`w${i}`, 1, 60_000, ['kind'])));
    const ids = claims.filter(Boolean).map((job) => job!.id);
    expect(ids.length).toBe(20);
    expect(new Set(ids).size).toBe(20);
  });

  it('lets a worker that lost its lease neither renew, complete, fail nor hand back the job, and the new holder all of them', async () => {
    await drain();
    const id = await t.store.jobs.enqueue('kind', {}, { now: 0 });
    const stale = (await t.store.jobs.claim('slow', 0, 100, ['kind']))!;
    // The lease runs out; another worker takes the job.
    const holder = (await t.store.jobs.claim('fresh', 101, 100, ['kind']))!;
    expect(holder).toMatchObject({ id, worker: 'fresh', attempts: 2 });
    expect(await t.store.jobs.extend(stale, 10_000)).toBe(false);
    expect(await t.store.jobs.complete(stale, 150)).toBe(false);
    expect(await t.store.jobs.fail(stale, 'late failure', 150, 200)).toBe(false);
    expect(await t.store.jobs.fail(stale, 'late failure', 150, undefined)).toBe(false);
    expect(await t.store.jobs.release(stale, 150)).toBe(false);
    // Nothing the stale worker tried changed the job: it is still the holder's, with its lease.
    const [row] = await t.store.db.query<{ status: string; worker: string; attempts: number; lease_until: number; last_error: string | null }>(
      'SELECT status, worker, attempts, lease_until, last_error FROM jobs WHERE id = $1',
      [id],
    );
    expect(row).toEqual({ status: 'running', worker: 'fresh', attempts: 2, lease_until: 201, last_error: null });
    expect(await t.store.jobs.extend(holder, 500)).toBe(true);
    expect(await t.store.jobs.complete(holder, 300)).toBe(true);
    expect(await t.store.jobs.get(id)).toEqual({ status: 'done', attempts: 2, lastError: null });
  });

  it('fences on the claim, not the worker: the same worker reclaiming a job it lost cannot finish the older claim', async () => {
    await drain();
    await t.store.jobs.enqueue('kind', {}, { now: 0 });
    const first = (await t.store.jobs.claim('w', 0, 100, ['kind']))!;
    const second = (await t.store.jobs.claim('w', 101, 100, ['kind']))!;
    expect(await t.store.jobs.complete(first, 150)).toBe(false);
    expect(await t.store.jobs.complete(second, 150)).toBe(true);
  });

  it('takes a job that was handed back at once, without counting the interrupted attempt', async () => {
    await drain();
    const id = await t.store.jobs.enqueue('kind', {}, { now: 0 });
    const job = (await t.store.jobs.claim('stopping', 0, 60_000, ['kind']))!;
    expect(await t.store.jobs.release(job, 10)).toBe(true);
    // Handed back: the stopping worker can no longer change it.
    expect(await t.store.jobs.complete(job, 11)).toBe(false);
    // Another worker takes it at once, as attempt 1 again, long before the lease would have run out.
    const again = await t.store.jobs.claim('other', 10, 60_000, ['kind']);
    expect(again).toMatchObject({ id, worker: 'other', attempts: 1 });
  });

  it('fails a job for good only for its holder, with the reason', async () => {
    await drain();
    const id = await t.store.jobs.enqueue('kind', {}, { now: 0 });
    const job = (await t.store.jobs.claim('w', 0, 100, ['kind']))!;
    expect(await t.store.jobs.fail(job, 'not audio', 10, undefined)).toBe(true);
    expect(await t.store.jobs.fail(job, 'again', 11, undefined)).toBe(false);
    expect(await t.store.jobs.get(id)).toEqual({ status: 'failed', attempts: 1, lastError: 'not audio' });
  });
});

describe.each(backends)('job queue kinds on %s', (backend) => {
  const t = useTestStore(backend);

  it('hands a worker only the kinds it names, so one kind never waits behind another', async () => {
    await t.store.db.execute('DELETE FROM jobs');
    const analysis = await t.store.jobs.enqueue('analyse', {}, { now: 0 });
    const delivery = await t.store.jobs.enqueue('deliver', {}, { now: 1 });
    expect((await t.store.jobs.claim('webhooks', 5, 100, ['deliver']))?.id).toBe(delivery);
    expect(await t.store.jobs.claim('webhooks', 5, 100, ['deliver'])).toBeUndefined();
    expect((await t.store.jobs.claim('audio', 5, 100, ['analyse', 'other']))?.id).toBe(analysis);
  });
});
