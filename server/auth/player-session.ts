/**
 * A collaborator's session on one player: a cookie that names the user and
 * its expiry, signed with an HMAC-SHA256 under a key derived from the
 * server's signing secret. The signature binds the player, the user and the
 * expiry, so a cookie cannot be moved to another player, given to another
 * user or made to last longer. It carries no API token and grants nothing on
 * the API: the policy gives sessions player permissions only.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SESSION_COOKIE = 'as_player_session';

/**
 * A day. Removing the collaborator ends their access at once (the role is
 * read on every request); this bounds how long a session outlives anything
 * the server cannot see, such as a revoked token it was opened with.
 */
export const SESSION_TTL_MS = 24 * 60 * 60 * 1000;

/** What a valid cookie says. */
export interface PlayerSession {
  playerId: string;
  userId: string;
  /** Milliseconds since the epoch. */
  expires: number;
}

const ID = /^[A-Za-z0-9_-]{1,64}$/;

export class PlayerSessionSigner {
  private readonly key: Buffer;

  constructor(signingSecret: Buffer) {
    // A key of its own, so that no signature made for a URL can ever pass as a session, or the reverse.
    this.key = createHmac('sha256', signingSecret).update('audio-share player session v1').digest();
  }

  /** The cookie value: `<userId>.<expires>.<signature>`. */
  issue(session: PlayerSession): string {
    return `${session.userId}.${session.expires}.${this.mac(session)}`;
  }

  /** The session a cookie value holds for this player, or undefined when it is malformed, forged, expired or for another player. */
  verify(value: string, playerId: string, now: number): PlayerSession | undefined {
    const parts = value.split('.');
    if (parts.length !== 3) return undefined;
    const [userId, expiresText, signature] = parts;
    const expires = Number(expiresText);
    if (!ID.test(userId) || !/^\d{1,15}$/.test(expiresText) || !Number.isSafeInteger(expires)) return undefined;
    const expected = Buffer.from(this.mac({ playerId, userId, expires }), 'base64url');
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    if (expires <= now) return undefined;
    return { playerId, userId, expires };
  }

  private mac({ playerId, userId, expires }: PlayerSession): string {
    // One field per line; ids hold no newline, so no two sessions share a string.
    return createHmac('sha256', this.key).update(`${playerId}\n${userId}\n${expires}`).digest('base64url');
  }
}
