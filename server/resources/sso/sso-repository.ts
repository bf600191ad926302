/**
 * What single sign-on keeps: the round trips under way (auth_challenges of
 * kind 'oidc', so that any process behind the load balancer can finish one
 * another began) and the identities linked to accounts (an OpenID provider's
 * issuer and subject).
 */
import type { Db } from '../../store/db.ts';

/** What the browser's way back must find again: the checks its answer is held to, and what the round trip was for. */
export interface OidcChallenge {
  nonce: string;
  codeVerifier: string;
  /** The invitation the round trip was begun with (/signup?invite=…), if any. */
  invite?: string;
  /** Where the sign-in returns to (an app's consent page, web/account/next-path.ts), if it was begun from one. */
  next?: string;
}

export class SsoRepository {
  private db: Db;

  constructor(db: Db) {
    this.db = db;
  }

  /** Keeps a round trip until `expiresAt`, under `id` (the hash of its state, which only the browser holds). */
  async saveChallenge(id: string, challenge: OidcChallenge, expiresAt: number): Promise<void> {
    await this.db.execute("INSERT INTO auth_challenges (id, kind, data, time_expires) VALUES ($1, 'oidc', $2, $3)", [id, JSON.stringify(challenge), expiresAt]);
  }

  /**
   * Takes the round trip out, so that it is used at most once even when two
   * processes are asked at the same moment (the DELETE decides, one of them
   * gets the row); answers undefined when there is none, or it expired.
   */
  async takeChallenge(id: string, now: number): Promise<OidcChallenge | undefined> {
    const [row] = await this.db.query<{ data: string; time_expires: number }>("DELETE FROM auth_challenges WHERE id = $1 AND kind = 'oidc' RETURNING data, time_expires", [id]);
    if (!row || row.time_expires <= now) return undefined;
    return JSON.parse(row.data) as OidcChallenge;
  }

  /** Forgets round trips that were never finished. */
  async sweepChallenges(now: number): Promise<number> {
    return this.db.execute("DELETE FROM auth_challenges WHERE kind = 'oidc' AND time_expires <= $1", [now]);
  }

  /** The account this identity signs in to, if it was linked. */
  async accountOf(issuer: string, subject: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ user_id: string }>('SELECT user_id FROM identities WHERE issuer = $1 AND subject = $2', [issuer, subject]);
    return row?.user_id;
  }

  /** Links the identity to the account; answers false when it was linked already (to this account or another). */
  async link(issuer: string, subject: string, userId: string, now: number): Promise<boolean> {
    return (await this.db.execute('INSERT INTO identities (issuer, subject, user_id, time_created) VALUES ($1, $2, $3, $4) ON CONFLICT (issuer, subject) DO NOTHING', [issuer, subject, userId, now])) === 1;
  }

  /** The identities linked to an account. */
  async identitiesOf(userId: string): Promise<Array<{ issuer: string; subject: string; timeCreated: number }>> {
    const rows = await this.db.query<{ issuer: string; subject: string; time_created: number }>('SELECT issuer, subject, time_created FROM identities WHERE user_id = $1 ORDER BY time_created', [userId]);
    return rows.map((row) => ({ issuer: row.issuer, subject: row.subject, timeCreated: row.time_created }));
  }
}
