/**
 * The account's own tokens (GET/POST/DELETE /me/tokens) and its security
 * events (GET /me/security-events). The issue: "a token has a name, scopes,
 * an optional expiry, `lastUsedAt`, and its secret shown once."
 */
import type { RequestFacts } from '../../lib/request-facts.ts';
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Caller } from '../../auth/access.ts';
import { badRequest, notFound } from '../../lib/problems.ts';
import type { TokenRecord } from './token-repository.ts';
import { recordSecurityEvent, type SecurityEventRecord } from './security-events.ts';

type Ports = Pick<Context, 'store' | 'clock'>;

/** Every scope, in the spec's order (schemas/tokens.yaml, TokenScope). */
export const ALL_SCOPES: readonly Schemas['TokenScope'][] = [
  'projects:read',
  'projects:write',
  'players:read',
  'players:write',
  'comments:read',
  'comments:write',
  'webhooks:read',
  'webhooks:write',
  'account:read',
  'account:write',
  // The server's administration (/admin/*): account:write is the person's own account only (issue 28).
  'admin',
];

/** The name a token made without one shows (the admin CLI's, before it took --label, and the sandbox's). */
export const UNNAMED_TOKEN = 'Unnamed token';

export function tokenJson(token: TokenRecord): Schemas['Token'] {
  return {
    id: token.id,
    object: 'token',
    name: token.label ?? UNNAMED_TOKEN,
    // Tokens made before scopes existed (scopes NULL) keep every scope: "tokens that exist today keep working with every scope".
    scopes: token.scopes === null ? [...ALL_SCOPES] : ALL_SCOPES.filter((scope) => token.scopes!.includes(scope)),
    ...(token.timeExpires !== null ? { expiresAt: Number(token.timeExpires) } : {}),
    ...(token.timeLastUsed !== null ? { lastUsedAt: Number(token.timeLastUsed) } : {}),
    timeCreated: Number(token.timeCreated),
  };
}

export async function listTokens(ctx: Ports, caller: Caller): Promise<Schemas['Token'][]> {
  return (await ctx.store.tokens.listActiveOf(caller.id)).map(tokenJson);
}

/** Makes a token; its secret is in this answer and nowhere else. */
export async function createToken(ctx: Ports, caller: Caller, facts: RequestFacts, body: Schemas['CreateTokenRequest']): Promise<Schemas['TokenWithSecret']> {
  const now = ctx.clock.now();
  if (body.expiresAt !== undefined && body.expiresAt <= now) {
    throw badRequest(`expiresAt ${body.expiresAt} is not in the future (the server's time is ${now}). Give a later time, or leave it out for a token that does not expire.`, [
      { pointer: '#/expiresAt', detail: 'must be in the future' },
    ]);
  }
  const scopes = ALL_SCOPES.filter((scope) => body.scopes.includes(scope));
  const name = body.name.trim();
  const { id, secret } = await ctx.store.tokens.create(caller.id, name, now, { scopes, expires: body.expiresAt ?? null });
  await recordSecurityEvent(ctx, { userId: caller.id, kind: 'token-created', facts, detail: name });
  return {
    ...tokenJson({ id, userId: caller.id, email: caller.email, label: name, scopes, timeExpires: body.expiresAt ?? null, timeLastUsed: null, timeCreated: now, timeRevoked: null }),
    secret,
  };
}

/** Revokes one of the caller's tokens; a token of anyone else's is not found, as if it did not exist. */
export async function revokeToken(ctx: Ports, caller: Caller, facts: RequestFacts, tokenId: string): Promise<void> {
  const revoked = await ctx.store.tokens.revokeOwn(caller.id, tokenId, ctx.clock.now());
  if (!revoked) throw notFound(`You have no token ${tokenId} that is not revoked yet. GET /me/tokens lists yours.`);
  await recordSecurityEvent(ctx, { userId: caller.id, kind: 'token-revoked', facts, detail: revoked.label ?? UNNAMED_TOKEN });
}

const KINDS: ReadonlySet<string> = new Set<Schemas['SecurityEventKind']>([
  'signin',
  'signin-failed',
  'signout',
  'password-changed',
  'password-reset',
  'token-created',
  'token-revoked',
  'passkey-added',
  'passkey-removed',
  'session-ended',
  'email-verified',
  'account-created',
]);

export function securityEventJson(event: SecurityEventRecord & { kind: Schemas['SecurityEventKind'] }): Schemas['SecurityEvent'] {
  // Cut to the spec's maxLength: a client's User-Agent is whatever it sent.
  return {
    id: event.id,
    object: 'security_event',
    kind: event.kind,
    timeCreated: event.timeCreated,
    address: event.address?.slice(0, 100) ?? null,
    userAgent: event.userAgent?.slice(0, 1000) ?? null,
  };
}

/**
 * The account's latest security events, newest first. A kind the spec does
 * not list (written by a newer version of the server, say) is left out
 * rather than sent: the answer keeps to the contract clients were written
 * against.
 */
export async function listSecurityEvents(ctx: Ports, caller: Caller): Promise<Schemas['SecurityEvent'][]> {
  const events = await ctx.store.securityEvents.listOf(caller.id);
  return events.filter((event): event is SecurityEventRecord & { kind: Schemas['SecurityEventKind'] } => KINDS.has(event.kind)).map(securityEventJson);
}
