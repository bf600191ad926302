/**
 * Webhook subscriptions and their deliveries (migration 8; the app and grant
 * that made one, migration 30). Secrets are stored sealed; this layer stores
 * and reads the sealed text only.
 */
import type { Db } from '../../store/db.ts';
import type { Schemas } from '../../lib/api-types.ts';

export type WebhookEventType = Schemas['WebhookEventType'];
export type DeliveryStatus = Schemas['WebhookDelivery']['status'];
export type WebhookAttempt = Schemas['WebhookAttempt'];

export interface WebhookRecord {
  id: string;
  userId: string;
  label: string;
  url: string;
  events: WebhookEventType[];
  enabled: boolean;
  disabledReason: string | null;
  sealedSecret: string;
  /** The secret before the last rotation, still signing until `previousSecretExpires`. */
  sealedPreviousSecret: string | null;
  previousSecretExpires: number | null;
  secretRotated: number | null;
  timeCreated: number;
  timeModified: number;
  /** The OAuth app (client id) whose access token made it; null when the person made it (a personal token, the session). */
  appId: string | null;
  /** The grant that token was issued under: the subscription ends with it. Null with appId. */
  grantId: string | null;
}

export interface DeliveryRecord {
  /** Its `webhook-id`, the same on every attempt. */
  id: string;
  webhookId: string;
  eventId: string;
  type: WebhookEventType;
  /** The exact JSON that is signed and sent. */
  body: string;
  status: DeliveryStatus;
  attempts: WebhookAttempt[];
  nextAttempt: number | null;
  timeCreated: number;
}

/** The attempts a delivery keeps, oldest first: enough to see a whole retry schedule and a few redeliveries. */
export const KEPT_ATTEMPTS = 20;

type WebhookRow = {
  id: string;
  user_id: string;
  label: string;
  url: string;
  events: string;
  enabled: number;
  disabled_reason: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_expires: number | null;
  secret_rotated: number | null;
  time_created: number;
  time_modified: number;
  app_id: string | null;
  grant_id: string | null;
};

type DeliveryRow = {
  id: string;
  webhook_id: string;
  event_id: string;
  type: string;
  body: string;
  status: string;
  attempts: string;
  next_attempt: number | null;
  time_created: number;
};

const webhookFromRow = (row: WebhookRow): WebhookRecord => ({
  id: row.id,
  userId: row.user_id,
  label: row.label,
  url: row.url,
  events: JSON.parse(row.events),
  enabled: row.enabled === 1,
  disabledReason: row.disabled_reason,
  sealedSecret: row.secret,
  sealedPreviousSecret: row.previous_secret,
  previousSecretExpires: row.previous_secret_expires === null ? null : Number(row.previous_secret_expires),
  secretRotated: row.secret_rotated === null ? null : Number(row.secret_rotated),
  timeCreated: Number(row.time_created),
  timeModified: Number(row.time_modified),
  appId: row.app_id,
  grantId: row.grant_id,
});

const deliveryFromRow = (row: DeliveryRow): DeliveryRecord => ({
  id: row.id,
  webhookId: row.webhook_id,
  eventId: row.event_id,
  type: row.type as WebhookEventType,
  body: row.body,
  status: row.status as DeliveryStatus,
  attempts: JSON.parse(row.attempts),
  nextAttempt: row.next_attempt === null ? null : Number(row.next_attempt),
  timeCreated: Number(row.time_created),
});

/** `$1, $2, … $count`. */
const placeholders = (count: number) => Array.from({ length: count }, (_, i) => `$${i + 1}`).join(', ');

export type WebhookChanges = Partial<Pick<WebhookRecord, 'label' | 'url' | 'events' | 'enabled' | 'disabledReason'>>;

export class WebhookRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async insert(webhook: WebhookRecord): Promise<void> {
    await this.db.execute(
      `INSERT INTO webhooks (id, user_id, label, url, events, enabled, disabled_reason, secret, previous_secret, previous_secret_expires, secret_rotated, time_created, time_modified, app_id, grant_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`,
      [
        webhook.id,
        webhook.userId,
        webhook.label,
        webhook.url,
        JSON.stringify(webhook.events),
        webhook.enabled ? 1 : 0,
        webhook.disabledReason,
        webhook.sealedSecret,
        webhook.sealedPreviousSecret,
        webhook.previousSecretExpires,
        webhook.secretRotated,
        webhook.timeCreated,
        webhook.timeModified,
        webhook.appId,
        webhook.grantId,
      ],
    );
  }

  async get(id: string): Promise<WebhookRecord | undefined> {
    const [row] = await this.db.query<WebhookRow>('SELECT * FROM webhooks WHERE id = $1', [id]);
    return row && webhookFromRow(row);
  }

  /** The subscriptions of `ids` that exist, in no order. */
  async getMany(ids: readonly string[]): Promise<WebhookRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<WebhookRow>(`SELECT * FROM webhooks WHERE id IN (${placeholders(ids.length)})`, [...ids]);
    return rows.map(webhookFromRow);
  }

  async listOf(userId: string): Promise<WebhookRecord[]> {
    const rows = await this.db.query<WebhookRow>('SELECT * FROM webhooks WHERE user_id = $1 ORDER BY time_created, id', [userId]);
    return rows.map(webhookFromRow);
  }

  /** The user's enabled subscriptions to `type`: where an event of theirs goes. */
  async subscribedTo(userId: string, type: WebhookEventType): Promise<WebhookRecord[]> {
    const rows = await this.db.query<WebhookRow>('SELECT * FROM webhooks WHERE user_id = $1 AND enabled = 1 ORDER BY time_created, id', [userId]);
    return rows.map(webhookFromRow).filter((webhook) => webhook.events.includes(type));
  }

  async update(id: string, changes: WebhookChanges, now: number): Promise<void> {
    const columns: Record<string, string | number | null> = {};
    if (changes.label !== undefined) columns.label = changes.label;
    if (changes.url !== undefined) columns.url = changes.url;
    if (changes.events !== undefined) columns.events = JSON.stringify(changes.events);
    if (changes.enabled !== undefined) columns.enabled = changes.enabled ? 1 : 0;
    if (changes.disabledReason !== undefined) columns.disabled_reason = changes.disabledReason;
    const names = Object.keys(columns);
    await this.db.execute(`UPDATE webhooks SET ${names.map((name, i) => `${name} = $${i + 3}`).join(', ')}${names.length ? ', ' : ''}time_modified = $2 WHERE id = $1`, [
      id,
      now,
      ...Object.values(columns),
    ]);
  }

  /** Disables the subscription, with the reason its owner sees, unless it is disabled already. */
  async disable(id: string, reason: string, now: number): Promise<void> {
    await this.db.execute('UPDATE webhooks SET enabled = 0, disabled_reason = $2, time_modified = $3 WHERE id = $1 AND enabled = 1', [id, reason, now]);
  }

  async rotateSecret(id: string, sealedSecret: string, sealedPreviousSecret: string, previousExpires: number, now: number): Promise<void> {
    await this.db.execute(
      'UPDATE webhooks SET secret = $2, previous_secret = $3, previous_secret_expires = $4, secret_rotated = $5, time_modified = $5 WHERE id = $1',
      [id, sealedSecret, sealedPreviousSecret, previousExpires, now],
    );
  }

  async delete(id: string): Promise<void> {
    await this.db.execute('DELETE FROM webhooks WHERE id = $1', [id]);
  }

  /**
   * Deletes the subscriptions made under these grants (their deliveries go with them, ON DELETE CASCADE): run in
   * the transaction that ends the grants, so that no event of the account reaches the app after. Answers how many.
   */
  async deleteOfGrants(grantIds: readonly string[]): Promise<number> {
    if (grantIds.length === 0) return 0;
    return this.db.execute(`DELETE FROM webhooks WHERE grant_id IN (${placeholders(grantIds.length)})`, [...grantIds]);
  }

  /** Deletes the subscriptions the app made for the account, under any of its grants (the person revoked the app). */
  async deleteOfApp(userId: string, appId: string): Promise<number> {
    return this.db.execute('DELETE FROM webhooks WHERE user_id = $1 AND app_id = $2', [userId, appId]);
  }

  /**
   * Deletes the subscriptions whose grant is no longer there, or is past its expiry: a grant that ended by time (a
   * year unrenewed), or by a path that did not delete them. Run by the periodic sweep (server.ts). It reads the OAuth
   * server's grants (oauth_records, migration 25) by their ids, which oauth_records_by_grant indexes.
   */
  async deleteOfEndedGrants(now: number): Promise<number> {
    return this.db.execute(
      `DELETE FROM webhooks WHERE grant_id IS NOT NULL AND NOT EXISTS (
         SELECT 1 FROM oauth_records g WHERE g.grant_id = webhooks.grant_id AND g.model = 'Grant' AND (g.time_expires IS NULL OR g.time_expires > $1))`,
      [now],
    );
  }

  /** A pending delivery is queued with it, due at its next attempt (the delivery row is the job: delivery-queue.ts). */
  async insertDelivery(delivery: DeliveryRecord): Promise<void> {
    await this.db.execute(
      `INSERT INTO webhook_deliveries (id, webhook_id, event_id, type, body, status, attempts, next_attempt, time_created, due_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        delivery.id,
        delivery.webhookId,
        delivery.eventId,
        delivery.type,
        delivery.body,
        delivery.status,
        JSON.stringify(delivery.attempts),
        delivery.nextAttempt,
        delivery.timeCreated,
        delivery.status === 'pending' ? delivery.nextAttempt : null,
      ],
    );
  }

  /**
   * Queues a settled delivery again, due at `now`, for a new round of the
   * retry schedule. A claim still open on it (its last attempt recorded, its
   * end not yet) can change nothing after this: the row has no worker.
   */
  async redeliver(id: string, now: number): Promise<void> {
    await this.db.execute("UPDATE webhook_deliveries SET status = 'pending', next_attempt = $2, due_at = $2, worker = NULL, tries = 0 WHERE id = $1", [id, now]);
  }

  async getDelivery(id: string): Promise<DeliveryRecord | undefined> {
    const [row] = await this.db.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1', [id]);
    return row && deliveryFromRow(row);
  }

  /** The deliveries of `ids` that exist, in no order: a sender reads those of the jobs it claimed together in one go. */
  async getDeliveries(ids: readonly string[]): Promise<DeliveryRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.db.query<DeliveryRow>(`SELECT * FROM webhook_deliveries WHERE id IN (${placeholders(ids.length)})`, [...ids]);
    return rows.map(deliveryFromRow);
  }

  /** The subscription's deliveries since `since`, newest first, at most `max`. */
  async deliveriesOf(webhookId: string, since: number, max: number): Promise<DeliveryRecord[]> {
    const rows = await this.db.query<DeliveryRow>(
      'SELECT * FROM webhook_deliveries WHERE webhook_id = $1 AND time_created >= $2 ORDER BY time_created DESC, id DESC LIMIT $3',
      [webhookId, since, max],
    );
    return rows.map(deliveryFromRow);
  }

  /**
   * Records an attempt and the delivery's state after it; the oldest attempts
   * go past KEPT_ATTEMPTS. `before` is the delivery's attempts as the caller
   * read them: then it is one statement, which applies only if they are
   * still those (compared as stored), and otherwise the delivery is read again.
   */
  async recordAttempt(id: string, attempt: WebhookAttempt, status: DeliveryStatus, nextAttempt: number | null, before?: WebhookAttempt[]): Promise<void> {
    if (before) {
      const attempts = JSON.stringify([...before, attempt].slice(-KEPT_ATTEMPTS));
      const changed = await this.db.execute('UPDATE webhook_deliveries SET attempts = $2, status = $3, next_attempt = $4 WHERE id = $1 AND attempts = $5', [
        id,
        attempts,
        status,
        nextAttempt,
        JSON.stringify(before),
      ]);
      if (changed === 1) return;
    }
    const delivery = await this.getDelivery(id);
    if (!delivery) return;
    const attempts = [...delivery.attempts, attempt].slice(-KEPT_ATTEMPTS);
    await this.db.execute('UPDATE webhook_deliveries SET attempts = $2, status = $3, next_attempt = $4 WHERE id = $1', [id, JSON.stringify(attempts), status, nextAttempt]);
  }

  async setStatus(id: string, status: DeliveryStatus, nextAttempt: number | null): Promise<void> {
    await this.db.execute('UPDATE webhook_deliveries SET status = $2, next_attempt = $3 WHERE id = $1', [id, status, nextAttempt]);
  }

  /** Removes deliveries older than `before`: the log keeps 30 days. */
  async pruneDeliveries(before: number): Promise<number> {
    return this.db.execute("DELETE FROM webhook_deliveries WHERE time_created < $1 AND status <> 'pending'", [before]);
  }
}
