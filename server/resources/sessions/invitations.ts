/**
 * The invitations a sign-up may carry (`invite`):
 * - an administrator's invitation (POST /admin/invitations, the admin CLI): a
 *   one-time link for one email address, perhaps making an administrator;
 * - a collaborator's invitation to a player: `<playerid>.<token>`, the token
 *   of the invite link the players API already makes for that collaborator's
 *   email (players/invite-links.ts). The account made with it holds the
 *   player's access through its email, as every collaborator does.
 * Either is for one address: signing up with it proves that address (the
 * link was sent there), so the account's email counts as verified. The accounts rules:
 * "Collaborator access by email is granted only to an account whose email is
 * verified (by the mailed link, or by signing up through the invite link
 * sent to that address)."
 */
import type { Context } from '../../context.ts';
import { normalizeEmail } from '../account/user-repository.ts';
import { inviteMatches } from '../players/invite-links.ts';
export { collaboratorInvite } from '../players/invite-links.ts';

export interface Invitation {
  /** `sign-up`: the link open registration mails to an address without an account (sign-up-service.ts). */
  kind: 'administrator' | 'collaborator' | 'sign-up';
  /** Whether the account made with it administers the server. */
  admin: boolean;
}

/**
 * Accepts the invitation for `email` (using it, when it is an administrator's
 * one-time link), or answers undefined when it is not valid for that address.
 * Call it in the transaction that makes the account.
 */
export async function acceptInvitation(ctx: Pick<Context, 'store' | 'config'>, invite: string, email: string, now: number): Promise<Invitation | undefined> {
  const address = normalizeEmail(email);
  const separator = invite.indexOf('.');
  if (separator > 0) {
    const playerId = invite.slice(0, separator);
    const token = invite.slice(separator + 1);
    const collaborator = (await ctx.store.players.invites(playerId).catch(() => [])).find((candidate) => candidate.email === address);
    if (!collaborator || !inviteMatches(ctx, playerId, address, collaborator.nonce, token)) return undefined;
    return { kind: 'collaborator', admin: false };
  }
  const link = await ctx.store.oneTimeLinks.peek('invitation', invite, now);
  if (!link || (link.email !== null && link.email !== address)) return undefined;
  if (!(await ctx.store.oneTimeLinks.consume('invitation', invite, now))) return undefined;
  if (link.data.signUp === true) return { kind: 'sign-up', admin: false };
  return { kind: 'administrator', admin: link.data.admin === true };
}

/**
 * The accounts rules: "someone who already has an account signs in from that page
 * (link Sign in) and the access joins their account." The collaborator
 * invitation `invite` is used (once) for the account `user` signing in: sent
 * to the account's own address, it verifies that address; sent to another,
 * the player's collaborator entry becomes the account's. Answers false when
 * the invitation is not a collaborator's, or no longer works.
 */
export async function joinCollaboratorInvitation(
  ctx: Pick<Context, 'store' | 'config' | 'clock'>,
  invite: string,
  user: { id: string; email: string },
): Promise<boolean> {
  const separator = invite.indexOf('.');
  if (separator <= 0) return false;
  const playerId = invite.slice(0, separator);
  const token = invite.slice(separator + 1);
  const now = ctx.clock.now();
  const collaborators = await ctx.store.players.invites(playerId).catch(() => []);
  const invited = collaborators.find((candidate) => candidate.used === null && inviteMatches(ctx, playerId, candidate.email, candidate.nonce, token));
  if (!invited) return false;
  return ctx.store.transaction(async (store) => {
    if (!(await store.players.useInvite(playerId, invited.email, invited.nonce, now))) return false;
    if (invited.email === user.email) {
      await store.users.setEmailVerified(user.id);
      return true;
    }
    // The account holds an entry on this player already: the invitation adds nothing to it, and is used up.
    await store.players.moveCollaborator(playerId, invited.email, user.email, now);
    return true;
  });
}
