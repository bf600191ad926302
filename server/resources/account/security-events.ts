import type { Db } from '../../store/db.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { newId } from '../../lib/ids.ts';
import type { RequestFacts } from '../../lib/request-facts.ts';

/** What an account can review of its own security (GET /me/security-events): the spec's list, so the two cannot drift. */
export type SecurityEventKind = Schemas['SecurityEventKind'];

export interface SecurityEventRecord {
  id: string;
  userId: string;
  kind: SecurityEventKind;
  address: string | null;
  userAgent: string | null;
  detail: string | null;
  timeCreated: number;
}

type EventRow = { id: string; user_id: string; kind: SecurityEventKind; address: string | null; user_agent: string | null; detail: string | null; time_created: number };

/** How many events an account keeps: enough to review months of sign-ins, and a flood of failures cannot grow it without end. */
export const EVENTS_KEPT = 500;

export class SecurityEventRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async record(event: Omit<SecurityEventRecord, 'id'>): Promise<void> {
    await this.db.execute('INSERT INTO security_events (id, user_id, kind, address, user_agent, detail, time_created) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      newId('sev'),
      event.userId,
      event.kind,
      event.address,
      event.userAgent?.slice(0, 512) ?? null,
      event.detail,
      event.timeCreated,
    ]);
  }

  /** The account's events, newest first, at most EVENTS_KEPT. */
  async listOf(userId: string): Promise<SecurityEventRecord[]> {
    const rows = await this.db.query<EventRow>('SELECT * FROM security_events WHERE user_id = $1 ORDER BY time_created DESC, id DESC LIMIT $2', [userId, EVENTS_KEPT]);
    return rows.map((row) => ({
      id: row.id,
      userId: row.user_id,
      kind: row.kind,
      address: row.address,
      userAgent: row.user_agent,
      detail: row.detail,
      timeCreated: Number(row.time_created),
    }));
  }
}

/** Records an event of `userId`, with the address and browser of the request that caused it. */
export async function recordSecurityEvent(
  ctx: { store: { securityEvents: SecurityEventRepository }; clock: { now(): number } },
  event: { userId: string; kind: SecurityEventKind; facts?: RequestFacts; detail?: string },
): Promise<void> {
  await ctx.store.securityEvents.record({
    userId: event.userId,
    kind: event.kind,
    address: event.facts?.address ?? null,
    userAgent: event.facts?.userAgent ?? null,
    detail: event.detail ?? null,
    timeCreated: ctx.clock.now(),
  });
}
