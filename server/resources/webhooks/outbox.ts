/**
 * The outbox: an event is written in the transaction of the change it
 * reports, as one delivery per subscription to it, each queued to be sent
 * (the delivery row is its own job: delivery-queue.ts). A change that commits always gets its
 * events, and one that rolls back never does; nothing is sent inline. Call
 * `recordEvent` with the store of that transaction.
 */
import type { Context } from '../../context.ts';
import type { Store } from '../../repositories.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { newId } from '../../lib/ids.ts';
import type { WebhookEventType } from './webhook-repository.ts';

/** The kind of job a delivery is, to the worker that sends it. */
export const DELIVER_WEBHOOK = 'deliver-webhook';

/**
 * When each retry follows a failed attempt: the schedule of Standard
 * Webhooks' reference implementation (5 s, 5 min, 30 min, 2 h, 5 h, 10 h,
 * 10 h), over 27 hours in all, so that an endpoint down for a day still
 * gets every event. The issue asks for "at least 24 hours in total".
 */
export const RETRY_DELAYS_MS = [5_000, 5 * 60_000, 30 * 60_000, 2 * 3_600_000, 5 * 3_600_000, 10 * 3_600_000, 10 * 3_600_000];

/** What an event is about. The subscriptions that get it are those of the account that owns the project. */
export interface EventFacts {
  type: WebhookEventType;
  ownerId: string;
  projectId: string | null;
  boxId?: string | null;
  boxName?: string | null;
  commentId?: string | null;
  /** The object the event is about, as the API returns it. */
  data: object;
}

/** Writes the event's deliveries, queued, in `store`'s transaction; answers how many subscriptions get it. */
export async function recordEvent(ctx: Pick<Context, 'clock' | 'jobQueued'>, store: Store, facts: EventFacts): Promise<number> {
  const subscriptions = await store.webhooks.subscribedTo(facts.ownerId, facts.type);
  if (subscriptions.length === 0) return 0;
  const now = ctx.clock.now();
  const event: Schemas['WebhookEvent'] = {
    id: newId('evt'),
    type: facts.type,
    object: 'event',
    projectid: facts.projectId,
    boxid: facts.boxId ?? null,
    boxName: facts.boxName ?? null,
    commentid: facts.commentId ?? null,
    data: facts.data as Schemas['WebhookEvent']['data'],
    timeCreated: now,
  };
  const body = JSON.stringify(event);
  for (const subscription of subscriptions) {
    await store.webhooks.insertDelivery({
      id: newId('msg'),
      webhookId: subscription.id,
      eventId: event.id,
      type: facts.type,
      body,
      status: 'pending',
      attempts: [],
      nextAttempt: now,
      timeCreated: now,
    });
  }
  // Woken once the rows are there for it to read: waking it sooner would find nothing, and it would sleep a poll.
  store.afterCommit(() => ctx.jobQueued());
  return subscriptions.length;
}
