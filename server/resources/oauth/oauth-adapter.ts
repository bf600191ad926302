/**
 * oidc-provider's storage adapter (its example/my_adapter.js interface) on
 * our store, SQLite or PostgreSQL, never memory: every process of the
 * server reads and writes the same grants, codes and tokens.
 *
 * - Ids that are bearer secrets (codes, tokens) are kept as their SHA-256,
 *   and the token's own value (its `jti`) is taken out of the stored
 *   payload and put back on reading, with the id the caller holds.
 * - An access token is also written as a row of `tokens`, with its scopes
 *   and expiry, so that the API checks it exactly as a personal token
 *   (server/http/auth.ts); destroying it, or its grant, revokes that row.
 * - A grant destroyed ends what the app made through it (`endGrant`: its
 *   webhooks, issue 28), in the transaction that ends its tokens.
 * - Clients are the apps of `oauth_apps`: registered through POST /apps, or
 *   dynamically (RFC 7591) through oidc-provider, which writes them here.
 */
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { hashToken } from '../account/token-repository.ts';
import type { OAuthRepository, RecordIndexes } from './oauth-repository.ts';
import type { AppStore } from './oauth-apps.ts';

/** The models whose ids are bearer secrets, and whose payload's `jti` is that secret. */
const SECRET_IDS = new Set([
  'AccessToken',
  'AuthorizationCode',
  'RefreshToken',
  'RegistrationAccessToken',
  'InitialAccessToken',
  'ClientCredentials',
  'DeviceCode',
  'BackchannelAuthenticationRequest',
  'PushedAuthorizationRequest',
]);

/** The models whose records belong to a grant (memory_adapter.js's `grantable`). */
const GRANTABLE = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'DeviceCode', 'BackchannelAuthenticationRequest']);

export interface AdapterPorts {
  oauth: () => OAuthRepository;
  apps: AppStore;
  /**
   * Ends a grant oidc-provider destroys (a refresh token revoked at /oauth/revoke, or reused, or a code reused):
   * deletes its record, revokes its access tokens' rows, and deletes what the app made under it, in one transaction.
   */
  endGrant: (grantId: string, now: number) => Promise<void>;
  /** Real time, in ms: oidc-provider reckons expiry by its own clock (Date.now), so the records must too. */
  now: () => number;
}

const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

export function storeAdapter(ports: AdapterPorts): new (model: string) => Adapter {
  return class StoreAdapter implements Adapter {
    private readonly model: string;

    constructor(model: string) {
      this.model = model;
    }

    private key(id: string): string {
      // A grant's or a session's id is no credential to the API; codes and tokens are.
      return SECRET_IDS.has(this.model) || this.model === 'Session' || this.model === 'Interaction' ? hashToken(id) : id;
    }

    async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
      if (this.model === 'Client') return ports.apps.saveRegistered(payload);
      const now = ports.now();
      const stored = { ...payload };
      if (SECRET_IDS.has(this.model) && stored.jti === id) delete stored.jti;
      const indexes: RecordIndexes = {
        grantId: this.model === 'Grant' ? id : text(payload.grantId),
        uid: text(payload.uid),
        userCode: text(payload.userCode),
        accountId: text(payload.accountId),
        clientId: text(payload.clientId),
      };
      const expiresAt = typeof expiresIn === 'number' ? now + expiresIn * 1000 : null;
      const oauth = ports.oauth();
      await oauth.upsertRecord(this.model, this.key(id), stored, indexes, expiresAt, now);
      if (this.model === 'AccessToken' && indexes.accountId && indexes.clientId && indexes.grantId) {
        await oauth.recordAccessToken(
          {
            tokenHash: hashToken(id),
            userId: indexes.accountId,
            clientId: indexes.clientId,
            grantId: indexes.grantId,
            audience: typeof payload.aud === 'string' ? payload.aud : null,
            scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
            expiresAt: typeof payload.exp === 'number' ? payload.exp * 1000 : (expiresAt ?? now),
          },
          now,
        );
      }
    }

    async find(id: string): Promise<AdapterPayload | undefined> {
      if (this.model === 'Client') return ports.apps.clientMetadata(id);
      const record = await ports.oauth().findRecord(this.model, this.key(id), ports.now());
      if (!record) return undefined;
      return this.restored(record.payload, record.timeConsumed, id);
    }

    async findByUid(uid: string): Promise<AdapterPayload | undefined> {
      const record = await ports.oauth().findRecordBy(this.model, 'uid', uid, ports.now());
      return record && this.restored(record.payload, record.timeConsumed);
    }

    async findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
      const record = await ports.oauth().findRecordBy(this.model, 'user_code', userCode, ports.now());
      return record && this.restored(record.payload, record.timeConsumed);
    }

    async consume(id: string): Promise<void> {
      await ports.oauth().consumeRecord(this.model, this.key(id), ports.now());
    }

    async destroy(id: string): Promise<void> {
      if (this.model === 'Client') return void (await ports.apps.deleteRegistered(id));
      // A grant destroyed (revoked: reuse of a rotated refresh token, a revocation) ends its access tokens with it, and
      // what the app made through it. (A grant's id is no secret: it is its key as it is.)
      if (this.model === 'Grant') return ports.endGrant(id, ports.now());
      const oauth = ports.oauth();
      await oauth.destroyRecord(this.model, this.key(id));
      if (this.model === 'AccessToken') await oauth.revokeAccessToken(hashToken(id), ports.now());
    }

    async revokeByGrantId(grantId: string): Promise<void> {
      if (!GRANTABLE.has(this.model)) return;
      const oauth = ports.oauth();
      await oauth.destroyRecordsOfGrant(this.model, grantId);
      if (this.model === 'AccessToken') await oauth.revokeAccessTokensOfGrant(grantId, ports.now());
    }

    /** The payload as oidc-provider wrote it: its `jti` back (the id the caller holds), and `consumed`, in seconds, if it was. */
    private restored(payload: Record<string, unknown>, consumed: number | null, id?: string): AdapterPayload {
      const restored: AdapterPayload = { ...payload };
      if (id !== undefined && SECRET_IDS.has(this.model) && restored.jti === undefined) restored.jti = id;
      // oidc-provider's `consumed` is in seconds (epochTime()).
      if (consumed !== null) restored.consumed = Math.floor(consumed / 1000);
      return restored;
    }
  };
}
