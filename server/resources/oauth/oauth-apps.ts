/**
 * Apps (OAuth clients) and connected apps (the grants of an account):
 * GET/POST /apps, DELETE /apps/{appid}, GET /me/connected-apps and
 * DELETE /me/connected-apps/{appid}, and the client store oidc-provider
 * reads through its adapter (oauth-adapter.ts).
 *
 * A public app is a native one to oidc-provider (`application_type:
 * native`, `token_endpoint_auth_method: none`): its loopback redirect URIs
 * match with any port (RFC 8252 §7.3), and it proves itself with PKCE
 * alone. A confidential app is a web one with a secret, shown once and kept
 * sealed.
 */
import { randomBytes } from 'node:crypto';
import type { AdapterPayload, ClientMetadata } from 'oidc-provider';
import type { Context } from '../../context.ts';
import type { Caller } from '../../auth/access.ts';
import type { Schemas } from '../../lib/api-types.ts';
import { badRequest, notFound } from '../../lib/problems.ts';
import type { AppRecord } from './oauth-repository.ts';
import { SCOPES } from './oauth-scopes.ts';
import { actorOf, authorize } from '../../auth/authorize.ts';

type Ports = Pick<Context, 'store' | 'secrets' | 'clock'>;

/** What oidc-provider's adapter needs of the apps. */
export interface AppStore {
  clientMetadata(id: string): Promise<ClientMetadata | undefined>;
  /** A client registered dynamically (RFC 7591): oidc-provider has checked its metadata. */
  saveRegistered(payload: AdapterPayload): Promise<void>;
  deleteRegistered(id: string): Promise<void>;
}

const repository = (ctx: Ports) => ctx.store.oauth;

/** An app id: `app_` and 20 base32 characters (100 random bits); it is the public `client_id`, not a secret. */
export function newAppId(): string {
  const alphabet = '0123456789abcdefghjkmnpqrstvwxyz';
  return `app_${[...randomBytes(20)].map((byte) => alphabet[byte & 31]).join('')}`;
}

/** A client secret: 256 random bits, base64url. */
export const newAppSecret = () => randomBytes(32).toString('base64url');

/** Every client does the one grant this server offers, with its refresh tokens, whatever it registered. */
const GRANT = { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] };

export function appStore(ctx: Ports): AppStore {
  return {
    async clientMetadata(id) {
      const app = await repository(ctx).findApp(id);
      if (!app) return undefined;
      return {
        ...(app.metadata as Omit<ClientMetadata, 'client_id' | 'redirect_uris'>),
        redirect_uris: (app.metadata.redirect_uris as string[] | undefined) ?? [],
        ...GRANT,
        client_id: app.id,
        client_name: app.name,
        ...(app.secretSealed ? { client_secret: ctx.secrets.open(app.secretSealed) } : {}),
      };
    },
    async saveRegistered(payload) {
      const { client_id: id, client_secret: secret, client_name: name, ...metadata } = payload as ClientMetadata;
      const kind = metadata.token_endpoint_auth_method === 'none' ? 'public' : 'confidential';
      await repository(ctx).createApp({
        id,
        ownerId: null,
        name: typeof name === 'string' && name.trim() ? name.trim().slice(0, 100) : id,
        kind,
        metadata,
        secretSealed: typeof secret === 'string' ? ctx.secrets.seal(secret) : null,
        timeCreated: ctx.clock.now(),
      });
    },
    async deleteRegistered(id) {
      await repository(ctx).deleteApp(id, undefined, ctx.clock.now());
    },
  };
}

const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * What is wrong with the redirect URIs of a new app, each with its index; none when all may be used. The one rule
 * of both ways an app is made: POST /apps, and dynamic registration at /oauth/register (RFC 7591, oauth-provider.ts),
 * where `type` is public for a client that authenticates with `none` and confidential otherwise (saveRegistered).
 */
export function redirectUriProblems(uris: readonly string[], type: 'public' | 'confidential'): Array<{ index: number; detail: string }> {
  return uris.flatMap((uri, index) => {
    const detail = redirectUriProblem(uri, type);
    return detail ? [{ index, detail }] : [];
  });
}

/** Checks one redirect URI of a new app; answers what is wrong with it, or undefined. */
function redirectUriProblem(uri: string, type: 'public' | 'confidential'): string | undefined {
  const url = URL.parse(uri);
  if (!url) return `${uri} is not an absolute URL.`;
  // RFC 6749 §3.1.2: "The endpoint URI MUST NOT include a fragment component."
  if (uri.includes('#')) return `${uri} has a fragment (#…); a redirect URI may not.`;
  if (url.protocol === 'https:') return type === 'public' && LOOPBACK.has(url.hostname) ? `${uri}: a loopback redirect URI uses http, not https (RFC 8252 §7.3).` : undefined;
  if (url.protocol === 'http:') return LOOPBACK.has(url.hostname) ? undefined : `${uri} uses http on a host that is not loopback; use https, or http://127.0.0.1 for an app on the person's own machine.`;
  if (type === 'confidential') return `${uri}: a confidential app is a web app, whose redirect URIs are https (or http on loopback).`;
  // RFC 8252 §7.1: private-use URI schemes, "such as com.example.app"; never one a browser runs or shows itself.
  if (['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:', 'ftp:', 'ws:', 'wss:'].includes(url.protocol)) return `${uri} uses the ${url.protocol} scheme, which cannot be a redirect URI.`;
  if (!url.protocol.slice(0, -1).includes('.')) return `${uri}: a private-use scheme must be a reversed domain name the app controls, such as com.example.app: (RFC 8252 §7.1).`;
  return undefined;
}

function appOf(app: AppRecord): Schemas['App'] {
  return {
    id: app.id,
    object: 'app',
    name: app.name,
    type: app.kind,
    redirectUris: (app.metadata.redirect_uris as string[] | undefined) ?? [],
    timeCreated: app.timeCreated,
  };
}

export async function listApps(ctx: Ports, caller: Caller): Promise<Schemas['App'][]> {
  return (await repository(ctx).listAppsOf(caller.id)).map(appOf);
}

/** One of the caller's apps; another's is as unknown as a missing one (404), so ids cannot be probed. */
export async function getApp(ctx: Ports, caller: Caller, appId: string): Promise<Schemas['App']> {
  const app = await repository(ctx).findApp(appId);
  authorize(actorOf(caller, undefined), { permission: 'account:own', thing: { kind: 'app', id: appId, ownerId: app?.ownerId ?? '' } });
  // authorize refused an app that is not the caller's, a missing one included.
  return appOf(app!);
}

export async function createApp(ctx: Ports, caller: Caller, body: Schemas['CreateAppRequest']): Promise<Schemas['AppWithSecret']> {
  const errors = redirectUriProblems(body.redirectUris, body.type).map(({ index, detail }) => ({ pointer: `#/redirectUris/${index}`, detail }));
  if (errors.length > 0) throw badRequest(`Some redirect URIs cannot be used: ${errors.map((error) => error.detail).join(' ')}`, errors);
  const secret = body.type === 'confidential' ? newAppSecret() : undefined;
  const app: AppRecord = {
    id: newAppId(),
    ownerId: caller.id,
    name: body.name.trim(),
    kind: body.type,
    metadata: {
      redirect_uris: body.redirectUris,
      application_type: body.type === 'public' ? 'native' : 'web',
      token_endpoint_auth_method: body.type === 'public' ? 'none' : 'client_secret_basic',
    },
    secretSealed: secret === undefined ? null : ctx.secrets.seal(secret),
    timeCreated: ctx.clock.now(),
  };
  await repository(ctx).createApp(app);
  return { ...appOf(app), ...(secret === undefined ? {} : { secret }) };
}

/**
 * Deletes one of the caller's apps. The webhooks it made, for every account, go in the same statement (webhooks.app_id
 * references oauth_apps ON DELETE CASCADE, migration 30), and their pending deliveries with them.
 */
export async function deleteApp(ctx: Ports, caller: Caller, appId: string): Promise<void> {
  if (!(await repository(ctx).deleteApp(appId, caller.id, ctx.clock.now()))) throw notFound(`You have no app ${appId}. GET /apps lists yours.`);
}

export async function listConnectedApps(ctx: Ports, caller: Caller): Promise<Schemas['ConnectedApp'][]> {
  const connected = await repository(ctx).connectedAppsOf(caller.id, Date.now());
  return connected.map((app) => {
    const granted = new Set<string>();
    for (const grant of app.grants) {
      for (const resource of Object.values((grant.resources as Record<string, string> | undefined) ?? {})) {
        for (const scope of resource.split(' ')) if ((SCOPES as readonly string[]).includes(scope)) granted.add(scope);
      }
    }
    return {
      id: app.appId,
      object: 'connected_app',
      name: app.name,
      scopes: SCOPES.filter((scope) => granted.has(scope)),
      timeConnected: app.timeConnected,
      ...(app.timeLastUsed === null ? {} : { lastUsedAt: app.timeLastUsed }),
    };
  });
}

/**
 * Ends every grant the caller gave the app, and deletes the webhooks the app made for the caller (their pending
 * deliveries go with them), in one transaction: once the answer is sent, no event of the account reaches the app.
 */
export async function revokeConnectedApp(ctx: Ports, caller: Caller, appId: string): Promise<void> {
  const revoked = await ctx.store.transaction(async (store) => {
    if (!(await store.oauth.revokeConnectedApp(caller.id, appId, ctx.clock.now()))) return false;
    await store.webhooks.deleteOfApp(caller.id, appId);
    return true;
  });
  if (!revoked) {
    throw notFound(`You have not let app ${appId} in, or you revoked it already. GET /me/connected-apps lists the apps you let in.`);
  }
}
