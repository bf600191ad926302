/**
 * Sends deliveries, from their own durable queue (delivery-queue.ts: the
 * delivery row is the job), with a worker of its own (server/jobs/worker.ts)
 * so that deliveries never wait behind audio analysis. Every attempt of a delivery carries the same
 * `webhook-id` (the delivery's id), so receivers can drop the repeats: the
 * retries of a failed attempt, and the attempt a crashed worker made
 * before its job was taken up again.
 *
 * An endpoint that keeps failing is disabled, with a reason its owner reads
 * on the subscription: when every attempt of a delivery failed, over the
 * whole retry schedule (more than 27 hours), and nothing else was delivered
 * to it meanwhile; or at once when it answers 410 Gone, which says that it
 * is gone for good.
 */
import { createHmac, createSecretKey, type KeyObject } from 'node:crypto';
import type { Context } from '../../context.ts';
import type { Store } from '../../repositories.ts';
import type { Job } from '../../jobs/job-queue.ts';
import { PermanentJobError, Worker, type JobHandler } from '../../jobs/worker.ts';
import { DELIVER_WEBHOOK, RETRY_DELAYS_MS } from './outbox.ts';
import { sendWebhook } from './webhook-sender.ts';
import { KEPT_ATTEMPTS, type WebhookRecord } from './webhook-repository.ts';
import type { DeliveryJob } from './delivery-queue.ts';
import type { SecretBox } from '../../signing/secret-box.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'logger' | 'secrets'>;

/**
 * The code of a delivery's permanent failure when the endpoint answered 410:
 * RFC 9110 section 15.5.11, "the target resource is no longer available at
 * the origin server and that this condition is likely to be permanent".
 */
const ENDPOINT_GONE = 'endpoint-gone';

/** A delivery's job is its row: the job's id is the delivery's. */
const deliveryOf = (job: Job) => job.id;

/** A failed attempt; the worker retries it on the schedule, with the same webhook-id. */
class AttemptFailed extends Error {}

/**
 * The `webhook-signature` header: `v1,<base64 HMAC>` under the current
 * secret and, for the 24 hours after a rotation, a second one under the
 * previous secret. Standard Webhooks 1.0: "the signature header can contain
 * multiple signatures, separated by spaces", and a receiver accepts the
 * delivery if any one of them verifies.
 */
export function signatureHeader(secrets: SecretBox, webhook: WebhookRecord, id: string, at: Date, body: string): string {
  const keys = [webhook.sealedSecret];
  if (webhook.sealedPreviousSecret && (webhook.previousSecretExpires ?? 0) > at.getTime()) keys.push(webhook.sealedPreviousSecret);
  // Standard Webhooks 1.0: "the content to sign is composed by concatenating the id, timestamp and payload, separated
  // by the full-stop character (.)", the timestamp in integer seconds; the signature is base64 of its HMAC-SHA256,
  // under the secret's bytes (the base64 after `whsec_`), versioned `v1,`.
  const content = `${id}.${Math.floor(at.getTime() / 1000)}.${body}`;
  return keys.map((sealed) => `v1,${createHmac('sha256', signingKey(secrets, sealed)).update(content, 'utf8').digest('base64')}`).join(' ');
}

/** How many opened signing keys are kept, and for how long: a key is opened once per burst of deliveries, not per delivery. */
const OPENED_KEYS_KEPT = 1000;
export const OPENED_KEY_MS = 10 * 60_000;
/** Per secret box: what one server's box opened is no answer for another's. */
const openedKeysOf = new WeakMap<SecretBox, Map<string, { key: KeyObject; until: number }>>();

/**
 * The signing key sealed in `sealed`, opened (AES-GCM) once and kept for
 * OPENED_KEY_MS. Keyed by the sealed text itself, read with the webhook in
 * the same query: a rotated secret is another sealed text, so a kept key is
 * never stale; the time bound only limits how long a secret stays opened in
 * memory after its subscription stops getting deliveries.
 */
export function signingKey(secrets: SecretBox, sealed: string, now = Date.now()): KeyObject {
  let openedKeys = openedKeysOf.get(secrets);
  if (!openedKeys) openedKeysOf.set(secrets, (openedKeys = new Map()));
  const kept = openedKeys.get(sealed);
  if (kept && kept.until > now) return kept.key;
  openedKeys.delete(sealed);
  if (openedKeys.size >= OPENED_KEYS_KEPT) {
    for (const [other, entry] of openedKeys) if (entry.until <= now) openedKeys.delete(other);
    // Still full: the oldest opened goes (a Map iterates in insertion order).
    if (openedKeys.size >= OPENED_KEYS_KEPT) openedKeys.delete(openedKeys.keys().next().value!);
  }
  const secret = secrets.open(sealed);
  const key = createSecretKey(Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64'));
  openedKeys.set(sealed, { key, until: now + OPENED_KEY_MS });
  return key;
}

/**
 * Reads the subscriptions of the runs that start together, in one query for
 * them all: the worker starts the deliveries of one claim in one go
 * (server/jobs/worker.ts), and each run asks for its subscription before
 * its first await, so the asks of a claim gather here in the same moment and
 * are answered when it ends (a microtask). Nothing is kept past that: each
 * run reads its subscription as it is when it starts, so a disabled,
 * rotated or deleted one is seen by the next claim.
 */
function webhookLoader(ctx: Ports): (webhookId: string) => Promise<WebhookRecord | undefined> {
  let asked: Array<{ id: string; answer(webhook: WebhookRecord | undefined): void; fail(error: unknown): void }> = [];
  const flush = async () => {
    const batch = asked;
    asked = [];
    try {
      const webhooks = new Map((await ctx.store.webhooks.getMany([...new Set(batch.map((one) => one.id))])).map((webhook) => [webhook.id, webhook]));
      for (const one of batch) one.answer(webhooks.get(one.id));
    } catch (error) {
      for (const one of batch) one.fail(error);
    }
  };
  return (id) =>
    new Promise<WebhookRecord | undefined>((answer, fail) => {
      if (asked.length === 0) queueMicrotask(() => void flush());
      asked.push({ id, answer, fail });
    });
}

export function deliverWebhookHandler(ctx: Ports): JobHandler<Store> {
  const load = webhookLoader(ctx);
  return {
    retryDelayMs: (job) => RETRY_DELAYS_MS[Math.min(job.attempts, RETRY_DELAYS_MS.length) - 1],

    async run(run) {
      // The delivery queue's jobs (startWebhookWorker): each carries its delivery as the claim read it.
      const job = run.job as unknown as DeliveryJob;
      const { delivery } = job.payload;
      // Settled by another path: a last attempt recorded by a worker that died before its claim ended.
      if (delivery.status !== 'pending') return;
      const webhook = await load(delivery.webhookId);
      // Deleted, and its deliveries with it: the claim finds the row gone and ends.
      if (!webhook) return;
      if (!webhook.enabled) {
        // A disabled endpoint gets nothing, the deliveries queued before it was disabled included.
        job.payload.settle = { status: 'cancelled', attempts: delivery.attempts, nextAttempt: null };
        await run.complete();
        return;
      }
      const started = ctx.clock.now();
      const at = new Date(started);
      const outcome = await sendWebhook({
        url: webhook.url,
        body: delivery.body,
        timeoutMs: ctx.config.webhooks.timeoutMs,
        allowPrivate: ctx.config.webhooks.allowPrivate,
        headers: {
          // Standard Webhooks 1.0: webhook-id, webhook-timestamp (integer seconds since the epoch), webhook-signature.
          'webhook-id': delivery.id,
          'webhook-timestamp': String(Math.floor(started / 1000)),
          'webhook-signature': signatureHeader(ctx.secrets, webhook, delivery.id, at, delivery.body),
        },
      });
      const attempt = { attempt: delivery.attempts.length + 1, timeStarted: started, durationMs: Math.max(0, ctx.clock.now() - started), ...outcome };
      if (outcome.error === null) {
        // Recorded in the statement that ends the claim, and only while it holds: the same row, fenced.
        job.payload.settle = { status: 'succeeded', attempts: [...delivery.attempts, attempt].slice(-KEPT_ATTEMPTS), nextAttempt: null };
        await run.complete();
        return;
      }
      // Recorded now, whatever becomes of the claim: the endpoint did get (or miss) this attempt.
      const last = job.attempts >= job.maxAttempts;
      const nextAttempt = outcome.statusCode === 410 || last ? null : ctx.clock.now() + RETRY_DELAYS_MS[job.attempts - 1];
      await ctx.store.webhooks.recordAttempt(delivery.id, attempt, nextAttempt === null ? 'failed' : 'pending', nextAttempt, delivery.attempts);
      if (outcome.statusCode === 410) throw new PermanentJobError('The endpoint answered 410 Gone.', ENDPOINT_GONE);
      throw new AttemptFailed(outcome.error);
    },

    async failed(store, job, reason, code) {
      const delivery = await store.webhooks.getDelivery(deliveryOf(job));
      if (!delivery) return;
      await store.webhooks.setStatus(delivery.id, 'failed', null);
      const now = ctx.clock.now();
      if (code === ENDPOINT_GONE) {
        await store.webhooks.disable(delivery.webhookId, `The endpoint answered 410 Gone to delivery ${delivery.id}, which says it is gone for good. Turn the webhook on again once it is back.`, now);
        return;
      }
      // Disabled only if nothing got through meanwhile: an endpoint that answers other deliveries is not dead.
      const since = await store.webhooks.deliveriesOf(delivery.webhookId, delivery.timeCreated, 1000);
      if (since.some((other) => other.status === 'succeeded')) return;
      const last = delivery.attempts.at(-1);
      const hours = Math.round((now - delivery.timeCreated) / 3_600_000);
      await store.webhooks.disable(
        delivery.webhookId,
        `Every attempt to deliver ${delivery.id} failed, for ${hours} hours, and nothing else got through meanwhile. The last attempt: ${last?.error ?? reason} Fix the endpoint, then turn the webhook on again and redeliver what it missed.`,
        now,
      );
    },
  };
}

/** Starts this process's webhook sender; it runs wherever the API or an audio worker does. */
export function startWebhookWorker(ctx: Ports): Worker<Store> {
  const worker = new Worker<Store>(
    ctx.store,
    { [DELIVER_WEBHOOK]: deliverWebhookHandler(ctx) },
    {
      concurrency: ctx.config.webhooks.concurrency,
      pollMs: ctx.config.jobPollMs,
      leaseMs: ctx.config.jobLeaseMs,
      backoffBaseMs: ctx.config.jobBackoffMs,
      stopGraceMs: Math.min(ctx.config.shutdownGraceMs, ctx.config.webhooks.timeoutMs),
      jobLogLevel: 'debug',
    },
    ctx.clock,
    ctx.logger,
    // The deliveries' own queue, over the store or a transaction of it: the worker is given nothing else.
    (store) => (store as Store).deliveries,
  );
  worker.start();
  return worker;
}
