/**
 * A browser's session on one player: the `as_player_session` cookie of the
 * listener operations, scoped to the player's API paths. Its value is the
 * session as JSON (base64url) and an HMAC-SHA256 over the player and that
 * JSON, under a key derived from the server's signing secret, so a cookie
 * cannot be moved to another player, changed or made to last longer. It
 * carries no API token and grants nothing on the API: the policy gives
 * sessions player permissions only.
 *
 * What it may hold, each checked again against the database on every
 * request by resolveListener: the collaborator's user (their role is read
 * anew), a tag of the player's password hash (a changed or removed password
 * ends password sessions), a display name, a purchase (it must still exist).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { serialize as serializeCookie } from 'cookie';
import { apiRoot } from '../../context.ts';
import type { Config } from '../../config.ts';

export const LISTENER_SESSION_COOKIE = 'as_player_session';

/** A day: how long a session outlives anything the server cannot see. */
export const LISTENER_SESSION_TTL_MS = 24 * 60 * 60 * 1000;

/** A year: a session that holds a purchase. The buyer paid for the player, not for a day of it; the purchase itself is read anew on every request. */
export const PURCHASE_SESSION_TTL_MS = 365 * 24 * 60 * 60 * 1000;

export interface ListenerSession {
  /** Random; what a listener's writes are attributed to and rate limited by. */
  id: string;
  /** Milliseconds since the epoch. */
  expires: number;
  /** The collaborator's user, from an invite link. */
  userId?: string;
  /** passwordTag() of the password hash this session was opened with. */
  password?: string;
  /** The display name the listener comments under. */
  name?: string;
  /** A purchase of this player's paywall. */
  purchaseId?: string;
}

/** Browsers keep cookies up to 4096 bytes; a larger value is not ours. */
const MAX_VALUE = 4000;
const ID = /^[A-Za-z0-9_-]{1,64}$/;

export const newSessionId = () => `pss_${randomBytes(16).toString('base64url')}`;

/** A short, non-secret fingerprint of the stored password hash: changes whenever the password does. */
export const passwordTag = (passwordHash: string) => createHash('sha256').update(passwordHash).digest('base64url').slice(0, 22);

export class ListenerSessionSigner {
  private readonly key: Buffer;

  constructor(signingSecret: Buffer) {
    // A key of its own, so no signature made for a URL, an invite or the old page's session passes as one of these.
    this.key = createHmac('sha256', signingSecret).update('audio-share listener session v1').digest();
  }

  issue(playerId: string, session: ListenerSession): string {
    const body = Buffer.from(JSON.stringify(compact(session))).toString('base64url');
    return `${body}.${this.mac(playerId, body)}`;
  }

  /** The session a cookie value holds for this player, or undefined when it is malformed, forged, expired or another player's. */
  verify(value: string, playerId: string, now: number): ListenerSession | undefined {
    if (value.length > MAX_VALUE) return undefined;
    const parts = value.split('.');
    if (parts.length !== 2) return undefined;
    const [body, signature] = parts;
    const expected = Buffer.from(this.mac(playerId, body), 'base64url');
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      return undefined;
    }
    const session = parse(parsed);
    if (!session || session.expires <= now) return undefined;
    return session;
  }

  private mac(playerId: string, body: string): string {
    // Ids hold no newline and base64url no newline, so no two (player, body) pairs share a string.
    return createHmac('sha256', this.key).update(`${playerId}\n${body}`).digest('base64url');
  }
}

function compact(session: ListenerSession) {
  return Object.fromEntries(Object.entries(session).filter(([, value]) => value !== undefined));
}

function parse(value: unknown): ListenerSession | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const v = value as Record<string, unknown>;
  const optionalString = (field: unknown) => field === undefined || typeof field === 'string';
  if (typeof v.id !== 'string' || !ID.test(v.id)) return undefined;
  if (typeof v.expires !== 'number' || !Number.isSafeInteger(v.expires)) return undefined;
  if (!optionalString(v.userId) || !optionalString(v.password) || !optionalString(v.name) || !optionalString(v.purchaseId)) return undefined;
  return {
    id: v.id,
    expires: v.expires,
    ...(v.userId !== undefined ? { userId: v.userId as string } : {}),
    ...(v.password !== undefined ? { password: v.password as string } : {}),
    ...(v.name !== undefined ? { name: v.name as string } : {}),
    ...(v.purchaseId !== undefined ? { purchaseId: v.purchaseId as string } : {}),
  };
}

/** The API paths of one player, where its session cookie is sent: the view, the session, its comments. */
export const playerApiPath = (config: Config, playerId: string) => `${new URL(apiRoot(config)).pathname}/players/${playerId}`;

/**
 * The session cookie of one player, or its deletion (an empty value, no max
 * age). HttpOnly: no script reads it. SameSite=Lax rather than Strict: a
 * collaborator opens the player from a link in a mail or a chat, a cross-site
 * top-level navigation; Lax still withholds the cookie from every cross-site
 * POST and subresource, and the session's POST checks the origin besides.
 * Path: this player's API paths only. Secure when PUBLIC_URL is https.
 */
export function listenerSessionCookie(config: Config, playerId: string, value: string, ttlMs: number): string {
  return serializeCookie(LISTENER_SESSION_COOKIE, value, {
    httpOnly: true,
    sameSite: 'lax',
    secure: config.publicUrl.startsWith('https:'),
    path: playerApiPath(config, playerId),
    maxAge: Math.floor(ttlMs / 1000),
  });
}
