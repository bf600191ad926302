/**
 * What the OAuth authorization server keeps (migration 25): the apps, the
 * records of oidc-provider (grants, codes, tokens, sessions, interactions),
 * and, for each access token, its row in `tokens`, through which the API
 * checks it as it checks a personal token.
 *
 * Record ids that are bearer secrets (codes, tokens, session cookies) reach
 * this repository already hashed (`idHash`): the adapter hashes them.
 */
import type { Db } from '../../store/db.ts';
import { newId } from '../../lib/ids.ts';

export interface OAuthRecord {
  payload: Record<string, unknown>;
  timeConsumed: number | null;
}

/** The columns copied out of a record's payload, for lookups. */
export interface RecordIndexes {
  grantId: string | null;
  uid: string | null;
  userCode: string | null;
  accountId: string | null;
  clientId: string | null;
}

export interface AppRecord {
  id: string;
  ownerId: string | null;
  name: string;
  kind: 'public' | 'confidential';
  /** The client metadata oidc-provider reads, without the secret. */
  metadata: Record<string, unknown>;
  secretSealed: string | null;
  timeCreated: number;
}

export interface ConnectedAppRecord {
  appId: string;
  name: string;
  /** The grant's payload: its scopes are under resources. */
  grants: Array<Record<string, unknown>>;
  timeConnected: number;
  timeLastUsed: number | null;
}

type AppRow = { id: string; owner_id: string | null; name: string; kind: string; metadata: string; secret_sealed: string | null; time_created: number };

const appOf = (row: AppRow): AppRecord => ({
  id: row.id,
  ownerId: row.owner_id,
  name: row.name,
  kind: row.kind as AppRecord['kind'],
  metadata: JSON.parse(row.metadata),
  secretSealed: row.secret_sealed,
  timeCreated: Number(row.time_created),
});

export class OAuthRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  // --- oidc-provider's records -------------------------------------------------------------------------------------

  async upsertRecord(model: string, idHash: string, payload: Record<string, unknown>, indexes: RecordIndexes, expiresAt: number | null, now: number): Promise<void> {
    const params = [model, idHash, JSON.stringify(payload), indexes.grantId, indexes.uid, indexes.userCode, indexes.accountId, indexes.clientId, now, expiresAt];
    await this.db.execute(
      `INSERT INTO oauth_records (model, id_hash, payload, grant_id, uid, user_code, account_id, client_id, time_created, time_expires)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (model, id_hash) DO UPDATE SET payload = excluded.payload, grant_id = excluded.grant_id, uid = excluded.uid,
         user_code = excluded.user_code, account_id = excluded.account_id, client_id = excluded.client_id, time_expires = excluded.time_expires`,
      params,
    );
  }

  /** A record that has not expired (an expired one is as good as gone: oidc-provider would refuse it anyway). */
  async findRecord(model: string, idHash: string, now: number): Promise<OAuthRecord | undefined> {
    const [row] = await this.db.query<{ payload: string; time_consumed: number | null }>(
      'SELECT payload, time_consumed FROM oauth_records WHERE model = $1 AND id_hash = $2 AND (time_expires IS NULL OR time_expires > $3)',
      [model, idHash, now],
    );
    return row && { payload: JSON.parse(row.payload), timeConsumed: row.time_consumed === null ? null : Number(row.time_consumed) };
  }

  async findRecordBy(model: string, column: 'uid' | 'user_code', value: string, now: number): Promise<OAuthRecord | undefined> {
    const [row] = await this.db.query<{ payload: string; time_consumed: number | null }>(
      `SELECT payload, time_consumed FROM oauth_records WHERE model = $1 AND ${column} = $2 AND (time_expires IS NULL OR time_expires > $3)`,
      [model, value, now],
    );
    return row && { payload: JSON.parse(row.payload), timeConsumed: row.time_consumed === null ? null : Number(row.time_consumed) };
  }

  async consumeRecord(model: string, idHash: string, now: number): Promise<void> {
    await this.db.execute('UPDATE oauth_records SET time_consumed = $3 WHERE model = $1 AND id_hash = $2', [model, idHash, now]);
  }

  async destroyRecord(model: string, idHash: string): Promise<void> {
    await this.db.execute('DELETE FROM oauth_records WHERE model = $1 AND id_hash = $2', [model, idHash]);
  }

  async destroyRecordsOfGrant(model: string, grantId: string): Promise<void> {
    await this.db.execute('DELETE FROM oauth_records WHERE model = $1 AND grant_id = $2', [model, grantId]);
  }

  /** Forgets records that expired before `before`: a sweep, since nothing reads them any more. */
  async deleteExpiredRecords(before: number): Promise<number> {
    return this.db.execute('DELETE FROM oauth_records WHERE time_expires IS NOT NULL AND time_expires <= $1', [before]);
  }

  // --- access tokens, as rows of `tokens` ---------------------------------------------------------------------------

  /** An access token's row in `tokens`, so that the API's token check finds it (server/http/auth.ts). */
  async recordAccessToken(
    token: { tokenHash: string; userId: string; clientId: string; grantId: string; audience: string | null; scopes: string[]; expiresAt: number },
    now: number,
  ): Promise<void> {
    await this.db.execute(
      `INSERT INTO tokens (id, user_id, token_hash, label, scopes, time_expires, time_created, grant_id, client_id, audience)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (token_hash) DO NOTHING`,
      [newId('tok'), token.userId, token.tokenHash, `OAuth app ${token.clientId}`, JSON.stringify(token.scopes), token.expiresAt, now, token.grantId, token.clientId, token.audience],
    );
  }

  async revokeAccessToken(tokenHash: string, now: number): Promise<void> {
    await this.db.execute('UPDATE tokens SET time_revoked = $2 WHERE token_hash = $1 AND grant_id IS NOT NULL AND time_revoked IS NULL', [tokenHash, now]);
  }

  async revokeAccessTokensOfGrant(grantId: string, now: number): Promise<void> {
    await this.db.execute('UPDATE tokens SET time_revoked = $2 WHERE grant_id = $1 AND time_revoked IS NULL', [grantId, now]);
  }

  // --- apps ---------------------------------------------------------------------------------------------------------

  async createApp(app: AppRecord): Promise<void> {
    await this.db.execute('INSERT INTO oauth_apps (id, owner_id, name, kind, metadata, secret_sealed, time_created) VALUES ($1, $2, $3, $4, $5, $6, $7)', [
      app.id,
      app.ownerId,
      app.name,
      app.kind,
      JSON.stringify(app.metadata),
      app.secretSealed,
      app.timeCreated,
    ]);
  }

  async findApp(id: string): Promise<AppRecord | undefined> {
    const [row] = await this.db.query<AppRow>('SELECT id, owner_id, name, kind, metadata, secret_sealed, time_created FROM oauth_apps WHERE id = $1', [id]);
    return row && appOf(row);
  }

  /** The account's apps, newest first. */
  async listAppsOf(ownerId: string): Promise<AppRecord[]> {
    const rows = await this.db.query<AppRow>(
      'SELECT id, owner_id, name, kind, metadata, secret_sealed, time_created FROM oauth_apps WHERE owner_id = $1 ORDER BY time_created DESC, id',
      [ownerId],
    );
    return rows.map(appOf);
  }

  /**
   * Deletes an app and everything granted to it: its grants, codes and
   * tokens, and its access tokens' rows. `ownerId` undefined: whoever owns it
   * (a dynamically registered app, deleted through oidc-provider).
   */
  async deleteApp(id: string, ownerId: string | undefined, now: number): Promise<boolean> {
    return this.db.transaction(async (db) => {
      const deleted = ownerId === undefined
        ? await db.execute('DELETE FROM oauth_apps WHERE id = $1', [id])
        : await db.execute('DELETE FROM oauth_apps WHERE id = $1 AND owner_id = $2', [id, ownerId]);
      if (deleted !== 1) return false;
      await db.execute('UPDATE tokens SET time_revoked = $2 WHERE client_id = $1 AND time_revoked IS NULL', [id, now]);
      await db.execute("DELETE FROM oauth_records WHERE client_id = $1 AND model <> 'Session'", [id]);
      return true;
    });
  }

  // --- connected apps (the grants of an account) ---------------------------------------------------------------------

  /** The apps the account let in, with their grants and their tokens' last use; most recently connected first. */
  async connectedAppsOf(accountId: string, now: number): Promise<ConnectedAppRecord[]> {
    const rows = await this.db.query<{ client_id: string; name: string; payload: string; time_created: number; last_used: number | null }>(
      `SELECT g.client_id, a.name, g.payload, g.time_created,
         (SELECT MAX(t.time_last_used) FROM tokens t WHERE t.grant_id = g.grant_id) AS last_used
       FROM oauth_records g JOIN oauth_apps a ON a.id = g.client_id
       WHERE g.model = 'Grant' AND g.account_id = $1 AND (g.time_expires IS NULL OR g.time_expires > $2)
       ORDER BY g.time_created DESC, g.client_id`,
      [accountId, now],
    );
    const byApp = new Map<string, ConnectedAppRecord>();
    for (const row of rows) {
      const lastUsed = row.last_used === null ? null : Number(row.last_used);
      const app = byApp.get(row.client_id);
      if (!app) {
        byApp.set(row.client_id, { appId: row.client_id, name: row.name, grants: [JSON.parse(row.payload)], timeConnected: Number(row.time_created), timeLastUsed: lastUsed });
        continue;
      }
      app.grants.push(JSON.parse(row.payload));
      app.timeConnected = Math.min(app.timeConnected, Number(row.time_created));
      if (lastUsed !== null && (app.timeLastUsed === null || lastUsed > app.timeLastUsed)) app.timeLastUsed = lastUsed;
    }
    return [...byApp.values()];
  }

  /**
   * Ends every grant the account gave, to every app (a new password takes the account back: session-service.ts's
   * endAccessOf): the access tokens' rows revoked, and every record of the account deleted, its grants, codes, access
   * and refresh tokens, and the provider's sessions that remember it signed in. Answers how many apps held a grant that
   * had not expired. Not a transaction of its own: the caller's, which also sets the new password, holds it.
   */
  async endGrantsOf(accountId: string, now: number): Promise<number> {
    const grants = await this.db.query<{ grant_id: string; client_id: string; time_expires: number | null }>(
      "SELECT grant_id, client_id, time_expires FROM oauth_records WHERE model = 'Grant' AND account_id = $1",
      [accountId],
    );
    await this.db.execute('UPDATE tokens SET time_revoked = $2 WHERE user_id = $1 AND grant_id IS NOT NULL AND time_revoked IS NULL', [accountId, now]);
    for (const { grant_id: grantId } of grants) await this.db.execute('DELETE FROM oauth_records WHERE grant_id = $1', [grantId]);
    await this.db.execute('DELETE FROM oauth_records WHERE account_id = $1', [accountId]);
    return new Set(grants.filter((grant) => grant.time_expires === null || Number(grant.time_expires) > now).map((grant) => grant.client_id)).size;
  }

  /** Ends every grant the account gave the app: its records and its access tokens, at once. False when there was none. */
  async revokeConnectedApp(accountId: string, appId: string, now: number): Promise<boolean> {
    return this.db.transaction(async (db) => {
      const grants = await db.query<{ grant_id: string }>("SELECT grant_id FROM oauth_records WHERE model = 'Grant' AND account_id = $1 AND client_id = $2", [accountId, appId]);
      if (grants.length === 0) return false;
      for (const { grant_id: grantId } of grants) {
        await db.execute('UPDATE tokens SET time_revoked = $2 WHERE grant_id = $1 AND time_revoked IS NULL', [grantId, now]);
        await db.execute('DELETE FROM oauth_records WHERE grant_id = $1', [grantId]);
      }
      return true;
    });
  }
}
