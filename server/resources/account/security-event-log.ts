/**
 * Reading an account's security events (GET /me/security-events). They are
 * written where they happen (security-events.ts); this reads them back.
 */
import type { Db } from '../../store/db.ts';

export interface SecurityEventRecord {
  id: string;
  kind: string;
  address: string | null;
  userAgent: string | null;
  timeCreated: number;
}

type SecurityEventRow = { id: string; kind: string; address: string | null; user_agent: string | null; time_created: number | string };

/** How many of its latest events an account can read: its recent history, not an archive. */
export const SECURITY_EVENTS_SHOWN = 1000;

export class SecurityEventLog {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** The account's latest events, newest first. */
  async latestOf(userId: string, limit = SECURITY_EVENTS_SHOWN): Promise<SecurityEventRecord[]> {
    const rows = await this.db.query<SecurityEventRow>(
      'SELECT id, kind, address, user_agent, time_created FROM security_events WHERE user_id = $1 ORDER BY time_created DESC, id LIMIT $2',
      [userId, limit],
    );
    return rows.map((row) => ({ id: row.id, kind: row.kind, address: row.address, userAgent: row.user_agent, timeCreated: Number(row.time_created) }));
  }
}
