/**
 * Collaborators' invite links. The token is an HMAC-SHA256, under a key
 * derived from the signing secret, over the player, the collaborator's email
 * and a random nonce stored with the collaborator. So the owner can list the
 * links again (they are derived, not stored), a new nonce makes a new link
 * and kills the old one, and the database alone (without the secret) gives
 * no working link. A link works once: its use is recorded with the nonce.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from '../../context.ts';
import { derivedKey } from '../../signing/derived-keys.ts';

// A key of its own, so no signature made for a URL or a session can pass as an invite, or the reverse.
const keyOf = (secret: Buffer) => derivedKey(secret, 'audio-share invite link v1');

export const newInviteNonce = () => randomBytes(16).toString('base64url');

export function inviteToken(ctx: Pick<Context, 'config'>, playerId: string, email: string, nonce: string): string {
  // One field per line; ids, emails and nonces hold no newline, so no two invites share a string.
  return createHmac('sha256', keyOf(ctx.config.signingSecret)).update(`${playerId}\n${email}\n${nonce}`).digest('base64url');
}

export function inviteUrl(ctx: Pick<Context, 'config'>, playerId: string, email: string, nonce: string): string {
  return `${ctx.config.publicUrl}/p/${playerId}?invite=${inviteToken(ctx, playerId, email, nonce)}`;
}

/**
 * The `invite` of a collaborator's sign-up (sessions/invitations.ts):
 * `<playerid>.<token>`, the token of the invite link above.
 */
export const collaboratorInvite = (playerId: string, token: string) => `${playerId}.${token}`;

/**
 * Where the collaborator's invitation mail leads: the sign-up page with the
 * invite, where the account made holds the player's access (an address
 * with an account already signs in from there instead).
 */
export function signUpInviteUrl(ctx: Pick<Context, 'config'>, playerId: string, email: string, nonce: string): string {
  return `${ctx.config.publicUrl}/signup?invite=${encodeURIComponent(collaboratorInvite(playerId, inviteToken(ctx, playerId, email, nonce)))}`;
}

/** Whether `token` is the link of this collaborator's current nonce (in constant time). */
export function inviteMatches(ctx: Pick<Context, 'config'>, playerId: string, email: string, nonce: string, token: string): boolean {
  const expected = Buffer.from(inviteToken(ctx, playerId, email, nonce));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
