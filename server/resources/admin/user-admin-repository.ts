/**
 * What the administration of accounts reads and writes: the accounts with
 * their administrator, disabled and quota flags, and the one-time links it
 * makes (invitations, the first account's setup link). The links are known
 * by the SHA-256 of their secret, as tokens are: the secret is 256 random
 * bits, so a fast hash is enough, and the database never holds a link that
 * works.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from '../../store/db.ts';
import { newId } from '../../lib/ids.ts';
import { hashToken } from '../account/token-repository.ts';
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

export type OneTimeLinkKind = 'setup' | 'invitation' | 'reset' | 'verify';

export interface NewOneTimeLink {
  kind: OneTimeLinkKind;
  email: string | null;
  userId: string | null;
  data: Record<string, unknown>;
  createdBy: string | null;
  timeExpires: number;
}

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

  async countUsers(): Promise<number> {
    const [row] = await this.db.query<{ count: number | string }>('SELECT COUNT(*) AS count FROM users');
    return Number(row.count);
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

  /** The account's own storage quota, or null when the server's applies (or there is no such account). */
  async storageQuotaOf(id: string): Promise<number | null> {
    const [row] = await this.db.query<{ storage_quota: number | string | null }>('SELECT storage_quota FROM users WHERE id = $1', [id]);
    return row?.storage_quota === null || row?.storage_quota === undefined ? null : Number(row.storage_quota);
  }

  /** Records a one-time link and answers its secret, which only the link carries. */
  async createLink(link: NewOneTimeLink, now: number): Promise<{ id: string; secret: string }> {
    const id = newId('lnk');
    const secret = randomBytes(32).toString('base64url');
    await this.db.execute(
      `INSERT INTO one_time_links (id, kind, secret_hash, user_id, email, data, created_by, time_created, time_expires)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [id, link.kind, hashToken(secret), link.userId, link.email, JSON.stringify(link.data), link.createdBy, now, link.timeExpires],
    );
    return { id, secret };
  }
}
