import type { Db } from '../../store/db.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { newId } from '../../lib/ids.ts';

export interface PaymentProviderRecord {
  provider: 'stripe';
  accountId: string;
  timeConnected: number;
}

export interface UserRecord {
  id: string;
  email: string;
  preferences: Schemas['PlayerPreferences'];
  paymentProvider: PaymentProviderRecord | null;
  timeCreated: number;
}

type UserRow = { id: string; email: string; preferences: string; payment_provider: string | null; time_created: number };

const fromRow = (row: UserRow): UserRecord => ({
  id: row.id,
  email: row.email,
  preferences: JSON.parse(row.preferences),
  paymentProvider: row.payment_provider ? JSON.parse(row.payment_provider) : null,
  timeCreated: row.time_created,
});

/** Emails are compared case-insensitively, so they are stored lower-cased. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export class UserRepository {
  constructor(private db: Db) {}

  async get(id: string): Promise<UserRecord | undefined> {
    const [row] = await this.db.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
    return row && fromRow(row);
  }

  async findByEmail(email: string): Promise<UserRecord | undefined> {
    const [row] = await this.db.query<UserRow>('SELECT * FROM users WHERE email = $1', [normalizeEmail(email)]);
    return row && fromRow(row);
  }

  /** Returns the user with this email, creating it if there is none. */
  async findOrCreate(email: string, now: number): Promise<UserRecord> {
    const normalized = normalizeEmail(email);
    await this.db.execute('INSERT INTO users (id, email, time_created) VALUES ($1, $2, $3) ON CONFLICT (email) DO NOTHING', [newId('usr'), normalized, now]);
    return (await this.findByEmail(normalized))!;
  }

  async setPreferences(id: string, preferences: Schemas['PlayerPreferences']): Promise<void> {
    await this.db.execute('UPDATE users SET preferences = $2 WHERE id = $1', [id, JSON.stringify(preferences)]);
  }

  async setPaymentProvider(id: string, provider: PaymentProviderRecord | null): Promise<void> {
    await this.db.execute('UPDATE users SET payment_provider = $2 WHERE id = $1', [id, provider && JSON.stringify(provider)]);
  }
}
