/**
 * What the administration of accounts reads and writes: the accounts with
 * their administrator, disabled and quota flags.
 */
import type { Db } from '../../store/db.ts';
import { forUpdate } from '../projects/project-repository.ts';

export interface AdminUserRecord {
  id: string;
  email: string;
  name: string | null;
  admin: boolean;
  disabled: boolean;
  emailVerified: boolean;
  /** The account's own quota in bytes; null when the server's applies. */
  storageQuota: number | null;
  timeCreated: number;
}

type AdminUserRow = {
  id: string;
  email: string;
  name: string | null;
  is_admin: number;
  disabled: number;
  email_verified: number;
  storage_quota: number | string | null;
  time_created: number | string;
};

const COLUMNS = 'id, email, name, is_admin, disabled, email_verified, storage_quota, time_created';

const fromRow = (row: AdminUserRow): AdminUserRecord => ({
  id: row.id,
  email: row.email,
  name: row.name,
  admin: Number(row.is_admin) === 1,
  disabled: Number(row.disabled) === 1,
  emailVerified: Number(row.email_verified) === 1,
  storageQuota: row.storage_quota === null ? null : Number(row.storage_quota),
  timeCreated: Number(row.time_created),
});

export class UserAdminRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async list(): Promise<AdminUserRecord[]> {
    const rows = await this.db.query<AdminUserRow>(`SELECT ${COLUMNS} FROM users ORDER BY time_created, id`);
    return rows.map(fromRow);
  }

  async get(id: string): Promise<AdminUserRecord | undefined> {
    const [row] = await this.db.query<AdminUserRow>(`SELECT ${COLUMNS} FROM users WHERE id = $1`, [id]);
    return row && fromRow(row);
  }

  /**
   * The ids of the administrators who are not disabled, their rows locked
   * until the end of the transaction (on PostgreSQL; SQLite's transactions
   * are exclusive): two administrators who demote each other at once are
   * taken one after the other, and the second sees the first's change.
   */
  async lockActiveAdmins(): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(`SELECT id FROM users WHERE is_admin = 1 AND disabled = 0 ORDER BY id${forUpdate(this.db)}`);
    return rows.map((row) => row.id);
  }

  /** Changes the fields given; answers the account as it is now, or undefined when there is none. */
  async update(id: string, change: { disabled?: boolean; admin?: boolean; storageQuota?: number | null }): Promise<AdminUserRecord | undefined> {
    const sets: string[] = [];
    const params: Array<string | number | null> = [id];
    const set = (column: string, value: string | number | null) => {
      params.push(value);
      sets.push(`${column} = $${params.length}`);
    };
    if (change.disabled !== undefined) set('disabled', change.disabled ? 1 : 0);
    if (change.admin !== undefined) set('is_admin', change.admin ? 1 : 0);
    if (change.storageQuota !== undefined) set('storage_quota', change.storageQuota);
    if (sets.length > 0) await this.db.execute(`UPDATE users SET ${sets.join(', ')} WHERE id = $1`, params);
    return this.get(id);
  }
}
