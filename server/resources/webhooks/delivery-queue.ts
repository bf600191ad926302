/**
 * Webhook deliveries as their own queue: the delivery row is the job
 * (migration 32). A claim takes the due rows and answers them whole, body
 * and attempts included, so a sender reads nothing else of them; settling a
 * delivery (its attempt, its status, the end of its claim) is one UPDATE of
 * its row. The rules are the job queue's (server/jobs/job-queue.ts), which
 * the worker relies on:
 *
 * - a claim leases the row: `due_at` becomes the end of the lease, so a row
 *   whose holder died is due again when the lease runs out, and claimed
 *   again, as a job would be;
 * - on PostgreSQL the claim skips rows other workers hold (FOR UPDATE SKIP
 *   LOCKED), so that workers in several processes never take the same one;
 *   on SQLite it is one UPDATE … RETURNING, which the database serialises;
 * - every claim is fenced on the worker that made it and the row's claim
 *   count (`claims`, which each claim adds one to and nothing resets):
 *   renewing, settling, failing and handing back change nothing, and answer
 *   false, once that claim no longer holds the row.
 */
import type { Db } from '../../store/db.ts';
import type { Job, Queue } from '../../jobs/job-queue.ts';
import { DELIVER_WEBHOOK, RETRY_DELAYS_MS } from './outbox.ts';
import type { DeliveryRecord, DeliveryStatus, WebhookAttempt } from './webhook-repository.ts';

/** The state a delivery is left in when its claim completes; without one, the claim just ends. */
export interface DeliverySettlement {
  status: DeliveryStatus;
  attempts: WebhookAttempt[];
  nextAttempt: number | null;
}

// A type, not an interface: a job's payload is a Record, which only a type alias is assignable to.
export type DeliveryPayload = {
  /** What the sender needs of the row, as the claim left it. */
  delivery: Pick<DeliveryRecord, 'id' | 'webhookId' | 'body' | 'status' | 'attempts'>;
  /** The row's claim count this claim made: with the worker, the fence. */
  claim: number;
  /** Set by the sender before it completes the claim: written in the same statement that ends it. */
  settle?: DeliverySettlement;
};

export type DeliveryJob = Job<DeliveryPayload>;

/**
 * How many claims a delivery gets in one round (from its event, or a
 * redelivery): its first attempt and one per retry. A claim that never
 * settled (its worker died) counts too, as a job's did.
 */
export const DELIVERY_MAX_TRIES = RETRY_DELAYS_MS.length + 1;

type ClaimedRow = {
  id: string;
  webhook_id: string;
  body: string;
  status: string;
  attempts: string;
  next_attempt: number | string | null;
  claims: number;
  tries: number;
};

/** The WHERE clause that matches a row only while this claim holds it ($1 id, $2 worker, $3 claim count). */
const HELD = 'id = $1 AND worker = $2 AND claims = $3';

const fence = (job: DeliveryJob) => [job.id, job.worker, job.payload.claim];

export class DeliveryQueue implements Queue<DeliveryJob> {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /**
   * Takes up to `max` due deliveries, those whose next attempt has come and
   * those whose lease ran out, in the order they fell due: one index
   * (webhook_deliveries_due) holds both, in that order. `kinds` is the
   * worker's; this queue holds deliveries only.
   */
  async claimMany(worker: string, now: number, leaseMs: number, _kinds: readonly string[], max: number): Promise<DeliveryJob[]> {
    // A read first: an UPDATE that finds nothing still takes the write lock and commits (on SQLite ten times the
    // cost of this look), and an idle sender polls.
    const [any] = await this.db.query('SELECT 1 AS due FROM webhook_deliveries WHERE due_at <= $1 LIMIT 1', [now]);
    if (!any) return [];
    const lock = this.db.dialect === 'postgres' ? 'FOR UPDATE SKIP LOCKED' : '';
    const rows = await this.db.query<ClaimedRow>(
      `UPDATE webhook_deliveries SET due_at = $2, worker = $3, claims = claims + 1, tries = tries + 1
       WHERE id IN (SELECT id FROM webhook_deliveries WHERE due_at <= $1 ORDER BY due_at, id LIMIT $4 ${lock})
       RETURNING id, webhook_id, body, status, attempts, next_attempt, claims, tries`,
      [now, now + leaseMs, worker, max],
    );
    // RETURNING keeps no order, and the claim overwrote the time each fell due: the ones waiting longest go first.
    if (rows.length > 1) rows.sort((a, b) => Number(a.next_attempt ?? 0) - Number(b.next_attempt ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return rows.map((row) => ({
      id: row.id,
      kind: DELIVER_WEBHOOK,
      payload: {
        delivery: { id: row.id, webhookId: row.webhook_id, body: row.body, status: row.status as DeliveryStatus, attempts: JSON.parse(row.attempts) },
        claim: Number(row.claims),
      },
      attempts: Number(row.tries),
      maxAttempts: DELIVERY_MAX_TRIES,
      // What the claim set: the columns it wrote are not read back (each column RETURNING copies costs, per row).
      leaseUntil: now + leaseMs,
      worker,
    }));
  }

  async extend(job: DeliveryJob, until: number): Promise<boolean> {
    return (await this.db.execute(`UPDATE webhook_deliveries SET due_at = $4 WHERE ${HELD}`, [...fence(job), until])) === 1;
  }

  /** Ends the claim, leaving the delivery as `job.payload.settle` says if the sender set it. */
  async complete(job: DeliveryJob, _now: number): Promise<boolean> {
    const settle = job.payload.settle;
    const changed = settle
      ? await this.db.execute(`UPDATE webhook_deliveries SET due_at = NULL, worker = NULL, status = $4, attempts = $5, next_attempt = $6 WHERE ${HELD}`, [
          ...fence(job),
          settle.status,
          JSON.stringify(settle.attempts),
          settle.nextAttempt,
        ])
      : await this.db.execute(`UPDATE webhook_deliveries SET due_at = NULL, worker = NULL WHERE ${HELD}`, fence(job));
    return changed === 1;
  }

  /**
   * Due again at `retryAt`, which a pending delivery shows as its next
   * attempt; with none, out of the queue (the sender's `failed` says why).
   * The error is in the delivery's attempts already.
   */
  async fail(job: DeliveryJob, _error: string, _now: number, retryAt: number | undefined): Promise<boolean> {
    const changed =
      retryAt === undefined
        ? await this.db.execute(`UPDATE webhook_deliveries SET due_at = NULL, worker = NULL WHERE ${HELD}`, fence(job))
        : await this.db.execute(
            `UPDATE webhook_deliveries SET due_at = $4, worker = NULL, next_attempt = CASE WHEN status = 'pending' THEN $4 ELSE next_attempt END WHERE ${HELD}`,
            [...fence(job), retryAt],
          );
    return changed === 1;
  }

  /** Handed back by a stopping worker: due at once, and this claim is not counted against the retry schedule. */
  async release(job: DeliveryJob, now: number): Promise<boolean> {
    return (
      (await this.db.execute(
        `UPDATE webhook_deliveries SET due_at = $4, worker = NULL, tries = tries - 1, next_attempt = CASE WHEN status = 'pending' THEN $4 ELSE next_attempt END WHERE ${HELD}`,
        [...fence(job), now],
      )) === 1
    );
  }
}
