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
  /** argon2id, as a PHC string; null for an account that has none (made from the shell, or by single sign-on). */
  passwordHash: string | null;
  /** Whether the account showed it receives mail at `email` (a mailed link, or signing up through a link mailed there). */
  emailVerified: boolean;
  isAdmin: boolean;
  /** A disabled account can neither sign in nor use its tokens. */
  disabled: boolean;
  /** Bytes this account may keep, over the server's STORAGE_QUOTA_BYTES; null for the server's. */
  storageQuota: number | null;
  /** Whether uploads stack themselves by the version markers of their names (migration 19); on by default. */
  autoStack: boolean;
  timeCreated: number;
}

type UserRow = {
  id: string;
  email: string;
  name: string | null;
  preferences: string;
  preferences_version: number;
  payment_provider: string | null;
  password_hash: string | null;
  email_verified: number;
  is_admin: number;
  disabled: number;
  storage_quota: number | null;
  /** Migration 19. */
  auto_stack?: number;
  time_created: number;
};

const fromRow = (row: UserRow): UserRecord => ({
  id: row.id,
  email: row.email,
  name: row.name,
  preferences: JSON.parse(row.preferences),
  preferencesVersion: row.preferences_version,
  paymentProvider: row.payment_provider ? JSON.parse(row.payment_provider) : null,
  passwordHash: row.password_hash,
  emailVerified: row.email_verified === 1,
  isAdmin: row.is_admin === 1,
  disabled: row.disabled === 1,
  storageQuota: row.storage_quota === null ? null : Number(row.storage_quota),
  autoStack: Number(row.auto_stack ?? 1) === 1,
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
   * Makes an account that signs in (the setup link, sign-up, an invitation,
   * single sign-on); answers undefined when the email is taken, so that the
   * caller says so rather than failing on the unique index.
   */
  async create(account: { email: string; name: string | null; passwordHash: string | null; emailVerified: boolean; isAdmin: boolean }, now: number): Promise<UserRecord | undefined> {
    const id = newId('usr');
    const inserted = await this.db.execute(
      'INSERT INTO users (id, email, name, password_hash, email_verified, is_admin, time_created) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (email) DO NOTHING',
      [id, normalizeEmail(account.email), account.name, account.passwordHash, account.emailVerified ? 1 : 0, account.isAdmin ? 1 : 0, now],
    );
    return inserted === 1 ? this.get(id) : undefined;
  }

  /** Whether any account exists: on a database with none, the server offers the one-time setup link. */
  async any(): Promise<boolean> {
    const [row] = await this.db.query<{ one: number }>('SELECT 1 AS one FROM users LIMIT 1');
    return row !== undefined;
  }

  async setPasswordHash(id: string, passwordHash: string): Promise<void> {
    await this.db.execute('UPDATE users SET password_hash = $2 WHERE id = $1', [id, passwordHash]);
  }

  async setEmailVerified(id: string): Promise<void> {
    await this.db.execute('UPDATE users SET email_verified = 1 WHERE id = $1', [id]);
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

  /** Turns the stacking of uploads by their version markers on or off. */
  async setAutoStack(id: string, autoStack: boolean): Promise<void> {
    await this.db.execute('UPDATE users SET auto_stack = $2 WHERE id = $1', [id, autoStack ? 1 : 0]);
  }

  /** Sets the display name, or removes it with null. */
  async setName(id: string, name: string | null): Promise<void> {
    await this.db.execute('UPDATE users SET name = $2 WHERE id = $1', [id, name]);
  }

  async setPaymentProvider(id: string, provider: PaymentProviderRecord | null): Promise<void> {
    await this.db.execute('UPDATE users SET payment_provider = $2 WHERE id = $1', [id, provider && JSON.stringify(provider)]);
  }
}
