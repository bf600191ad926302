/**
 * The delivery queue (the delivery row is the job) keeps the job queue's
 * rules: a claim leases, a lapsed lease is claimed again, every change is
 * fenced on its claim, and two workers claiming at once never get the same
 * delivery (on PostgreSQL, FOR UPDATE SKIP LOCKED).
 */
import { describe, expect, it } from 'vitest';
import { backends, useTestStore } from '../../testing/databases.ts';
import { newId } from '../../lib/ids.ts';
import { DELIVERY_MAX_TRIES } from './delivery-queue.ts';

describe.each(backends)('the delivery queue on %s', (backend) => {
  const t = useTestStore(backend);
  let webhookId = '';

  /** A pending delivery of a fresh subscription, due at `due`. */
  async function queued(due: number): Promise<string> {
    if (!webhookId) {
      const user = (await t.store.users.create({ email: `queue-${backend}@example.com`, name: null, passwordHash: null, emailVerified: true, isAdmin: false }, 0))!;
      webhookId = newId('whk');
      await t.store.webhooks.insert({
        id: webhookId, userId: user.id, label: '', url: 'https://203.0.113.7/hook', events: ['project.created'], enabled: true, disabledReason: null,
        sealedSecret: 'sealed', sealedPreviousSecret: null, previousSecretExpires: null, secretRotated: null, timeCreated: 0, timeModified: 0, appId: null, grantId: null,
      });
    }
    const id = newId('msg');
    await t.store.webhooks.insertDelivery({ id, webhookId, eventId: newId('evt'), type: 'project.created', body: '{"n":1}', status: 'pending', attempts: [], nextAttempt: due, timeCreated: due });
    return id;
  }
  const drain = () => t.store.db.execute('DELETE FROM webhook_deliveries');
  const row = async (id: string) =>
    (await t.store.db.query<{ status: string; due_at: number | null; worker: string | null; tries: number; next_attempt: number | null; attempts: string }>(
      'SELECT status, due_at, worker, tries, next_attempt, attempts FROM webhook_deliveries WHERE id = $1',
      [id],
    ))[0];

  it('hands a due delivery, whole, to one claim with a lease, and not before it is due', async () => {
    await drain();
    const id = await queued(1000);
    expect(await t.store.deliveries.claimMany('w1', 999, 100, [], 10)).toEqual([]);
    const [job] = await t.store.deliveries.claimMany('w1', 1000, 100, [], 10);
    expect(job).toMatchObject({ id, attempts: 1, maxAttempts: DELIVERY_MAX_TRIES, leaseUntil: 1100, worker: 'w1', payload: { claim: 1, delivery: { id, webhookId, body: '{"n":1}', status: 'pending', attempts: [] } } });
    expect(await t.store.deliveries.claimMany('w2', 1050, 100, [], 10)).toEqual([]);
    job.payload.settle = { status: 'succeeded', attempts: [{ attempt: 1, timeStarted: 1000, durationMs: 5, statusCode: 200, error: null }], nextAttempt: null };
    expect(await t.store.deliveries.complete(job, 1060)).toBe(true);
    expect(await row(id)).toMatchObject({ status: 'succeeded', due_at: null, worker: null, next_attempt: null });
    expect(JSON.parse((await row(id)).attempts)).toEqual([expect.objectContaining({ statusCode: 200 })]);
    expect(await t.store.deliveries.claimMany('w2', 1_000_000, 100, [], 10)).toEqual([]);
  });

  it('gives a delivery whose lease ran out to another claim, and lets the lost claim change nothing', async () => {
    await drain();
    const id = await queued(0);
    const [stale] = await t.store.deliveries.claimMany('crashed', 10, 100, [], 10);
    expect(await t.store.deliveries.extend(stale, 300)).toBe(true);
    expect(await t.store.deliveries.claimMany('other', 200, 100, [], 10)).toEqual([]);
    const [holder] = await t.store.deliveries.claimMany('other', 301, 100, [], 10);
    expect(holder).toMatchObject({ id, attempts: 2, worker: 'other', payload: { claim: 2 } });
    stale.payload.settle = { status: 'succeeded', attempts: [], nextAttempt: null };
    expect(await t.store.deliveries.extend(stale, 10_000)).toBe(false);
    expect(await t.store.deliveries.complete(stale, 350)).toBe(false);
    expect(await t.store.deliveries.fail(stale, 'late', 350, 400)).toBe(false);
    expect(await t.store.deliveries.fail(stale, 'late', 350, undefined)).toBe(false);
    expect(await t.store.deliveries.release(stale, 350)).toBe(false);
    expect(await row(id)).toMatchObject({ status: 'pending', due_at: 401, worker: 'other', tries: 2 });
    // The same worker claiming it again cannot finish its older claim either: the fence is the claim, not the worker.
    const [again] = await t.store.deliveries.claimMany('other', 402, 100, [], 10);
    expect(await t.store.deliveries.complete(holder, 403)).toBe(false);
    expect(await t.store.deliveries.complete(again, 403)).toBe(true);
  });

  it('retries at the time given, shown as the next attempt, and hands back a stopped claim at once without counting it', async () => {
    await drain();
    const id = await queued(0);
    const [first] = await t.store.deliveries.claimMany('w', 0, 100, [], 10);
    expect(await t.store.deliveries.fail(first, 'answered 503', 10, 5000)).toBe(true);
    expect(await row(id)).toMatchObject({ status: 'pending', due_at: 5000, next_attempt: 5000, worker: null });
    expect(await t.store.deliveries.claimMany('w', 4999, 100, [], 10)).toEqual([]);
    const [second] = await t.store.deliveries.claimMany('w', 5000, 100, [], 10);
    expect(second.attempts).toBe(2);
    expect(await t.store.deliveries.release(second, 5010)).toBe(true);
    const [third] = await t.store.deliveries.claimMany('w2', 5010, 100, [], 10);
    expect(third).toMatchObject({ attempts: 2, worker: 'w2' });
    expect(await t.store.deliveries.fail(third, 'for good', 5020, undefined)).toBe(true);
    expect(await row(id)).toMatchObject({ due_at: null, worker: null });
    expect(await t.store.deliveries.claimMany('w', 1_000_000, 100, [], 10)).toEqual([]);
  });

  it('takes due deliveries in the order they fell due, lapsed leases among them, up to the number asked', async () => {
    await drain();
    const ids = [await queued(30), await queued(10), await queued(20)];
    const [lapsed] = await t.store.deliveries.claimMany('crashed', 10, 5, [], 1);
    expect(lapsed.id).toBe(ids[1]);
    const claimed = await t.store.deliveries.claimMany('w', 40, 100, [], 2);
    expect(claimed.map((job) => job.id)).toEqual([ids[1], ids[2]]);
    expect((await t.store.deliveries.claimMany('w', 40, 100, [], 5)).map((job) => job.id)).toEqual([ids[0]]);
  });

  it('never hands one delivery to two workers claiming at once', async () => {
    await drain();
    for (let i = 0; i < 20; i++) await queued(0);
    const claims = await Promise.all(Array.from({ length: 40 }, (_, i) => t.store.deliveries.claimMany(`w${i}`, 1, 60_000, [], 1)));
    const ids = claims.flat().map((job) => job.id);
    expect(ids).toHaveLength(20);
    expect(new Set(ids).size).toBe(20);
  });

  it('queues a redelivered delivery again for a new round of the schedule, and ends the claim that was open on it', async () => {
    await drain();
    const id = await queued(0);
    const [open] = await t.store.deliveries.claimMany('w', 0, 100, [], 10);
    await t.store.webhooks.recordAttempt(id, { attempt: 1, timeStarted: 0, durationMs: 1, statusCode: 500, error: 'The endpoint answered 500.' }, 'failed', null, []);
    await t.store.webhooks.redeliver(id, 50);
    expect(await t.store.deliveries.fail(open, 'out of attempts', 60, undefined)).toBe(false);
    const [round] = await t.store.deliveries.claimMany('w', 60, 100, [], 10);
    expect(round).toMatchObject({ id, attempts: 1, payload: { delivery: { status: 'pending', attempts: [expect.objectContaining({ statusCode: 500 })] } } });
  });
});
