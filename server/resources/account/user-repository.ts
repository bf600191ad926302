import type { Db } from '../../store/db.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { newId } from '../../lib/ids.ts';
import { forUpdate } from '../projects/project-repository.ts';

export interface PaymentProviderRecord {
  provider: 'stripe';
  accountId: string;
  timeConnected: number;
}

export interface UserRecord {
  id: string;
  email: string;
  /** The display name the user's comments show; null until they set one. */
  name: string | null;
  preferences: Schemas['PlayerPreferences'];
  /** Changes with every change to the preferences; their ETag. */
  preferencesVersion: number;
  paymentProvider: PaymentProviderRecord | null;
  timeCreated: number;
}

type UserRow = { id: string; email: string; name: string | null; preferences: string; preferences_version: number; payment_provider: string | null; time_created: number };

const fromRow = (row: UserRow): UserRecord => ({
  id: row.id,
  email: row.email,
  name: row.name,
  preferences: JSON.parse(row.preferences),
  preferencesVersion: row.preferences_version,
  paymentProvider: row.payment_provider ? JSON.parse(row.payment_provider) : null,
  timeCreated: row.time_created,
});

/** Emails are compared case-insensitively, so they are stored lower-cased. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export class UserRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  async get(id: string): Promise<UserRecord | undefined> {
    const [row] = await this.db.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
    return row && fromRow(row);
  }

  async findByEmail(email: string): Promise<UserRecord | undefined> {
    const [row] = await this.db.query<UserRow>('SELECT * FROM users WHERE email = $1', [normalizeEmail(email)]);
    return row && fromRow(row);
  }

  /**
   * Returns the user with this email, creating it if there is none. An
   * account made here counts as verified: its address was proven another
   * way, by the operator who typed it in the admin CLI, or by the
   * collaborator's invite link made for it. (Sign-up makes unverified
   * accounts; a user found here keeps what it has.)
   */
  async findOrCreate(email: string, now: number): Promise<UserRecord> {
    const normalized = normalizeEmail(email);
    await this.db.execute('INSERT INTO users (id, email, email_verified, time_created) VALUES ($1, $2, 1, $3) ON CONFLICT (email) DO NOTHING', [newId('usr'), normalized, now]);
    return (await this.findByEmail(normalized))!;
  }

  /**
   * Reads the user and locks its row until the end of the transaction, for
   * the read-modify-write of the preferences (a merge into stored JSON).
   * Call it inside a transaction.
   */
  async getForUpdate(id: string): Promise<UserRecord | undefined> {
    const [row] = await this.db.query<UserRow>(`SELECT * FROM users WHERE id = $1${forUpdate(this.db)}`, [id]);
    return row && fromRow(row);
  }

  /** Stores the preferences and bumps their version; answers the new version. */
  async setPreferences(id: string, preferences: Schemas['PlayerPreferences']): Promise<number> {
    const [row] = await this.db.query<{ preferences_version: number }>(
      'UPDATE users SET preferences = $2, preferences_version = preferences_version + 1 WHERE id = $1 RETURNING preferences_version',
      [id, JSON.stringify(preferences)],
    );
    if (!row) throw new Error(`user ${id} does not exist`);
    return row.preferences_version;
  }

  /** Sets the display name, or removes it with null. */
  async setName(id: string, name: string | null): Promise<void> {
    await this.db.execute('UPDATE users SET name = $2 WHERE id = $1', [id, name]);
  }

  async setPaymentProvider(id: string, provider: PaymentProviderRecord | null): Promise<void> {
    await this.db.execute('UPDATE users SET payment_provider = $2 WHERE id = $1', [id, provider && JSON.stringify(provider)]);
  }
}
