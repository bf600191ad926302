/**
 * A player's collaborators and their invite links, for the player's owner
 * and the project's writers: list them (the links are derived again, see
 * invite-links.ts), invite one or change their role, remove one, renew
 * one's link.
 */
import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Caller } from '../../auth/access.ts';
import { conflict, notFound } from '../../lib/problems.ts';
import { accessProject, requireGrantable } from '../../auth/access.ts';
import { normalizeEmail } from '../account/user-repository.ts';
import { loadPlayer, recordPlayerUpdated } from './players-service.ts';
import type { CollaboratorInviteRecord } from './player-repository.ts';
import { inviteUrl, newInviteNonce } from './invite-links.ts';
import { mailCollaboratorInvitations, reserveInvitationMails } from './invitation-mail.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config' | 'signer' | 'jobQueued' | 'secrets'>;

const inviteJson = (ctx: Ports, playerId: string, invite: CollaboratorInviteRecord): Schemas['CollaboratorInvite'] => ({
  email: invite.email,
  role: invite.role,
  inviteUrl: inviteUrl(ctx, playerId, invite.email, invite.nonce),
  inviteUsed: invite.used !== null,
  timeInvited: invite.timeInvited,
});

export async function listCollaborators(ctx: Ports, caller: Caller, playerId: string): Promise<Schemas['CollaboratorInvite'][]> {
  await loadPlayer(ctx, caller, playerId, 'write');
  return (await ctx.store.players.invites(playerId)).map((invite) => inviteJson(ctx, playerId, invite));
}

const noCollaborator = (playerId: string, email: string) =>
  notFound(`Player ${playerId} has no collaborator ${email}. List them with GET /players/${playerId}/collaborators.`);

/** A player's collaborators at most, as createPlayer's `collaborators` (maxItems). */
const MAX_COLLABORATORS = 100;

export async function inviteCollaborator(ctx: Ports, caller: Caller, playerId: string, email: string, role: Schemas['CollaboratorRole']): Promise<Schemas['CollaboratorInvite']> {
  const player = await loadPlayer(ctx, caller, playerId, 'write');
  const { role: callerRole } = await accessProject(ctx, caller, player.projectId, 'write');
  requireGrantable(callerRole, role);
  const normalized = normalizeEmail(email);
  const inviter = await ctx.store.users.get(caller.id);
  // Someone new is mailed, so the mail is reserved first (its caps: invitation-mail.ts); a change of role mails nothing.
  const known = (await ctx.store.players.invites(playerId)).some((candidate) => candidate.email === normalized);
  const mails = known ? undefined : await reserveInvitationMails(ctx, caller.id, [normalized]);
  let mailed = false;
  try {
    const invite = await ctx.store.transaction(async (store) => {
      const outcome = await store.players.inviteCollaborator(playerId, normalized, role, ctx.clock.now(), MAX_COLLABORATORS);
      if (outcome === 'full') throw conflict(`Player ${playerId} has ${MAX_COLLABORATORS} collaborators, the most it may have. Remove one first.`);
      const updated = await store.players.get(playerId);
      if (updated) await recordPlayerUpdated(ctx, store, updated);
      // Someone new is mailed their link, as those invited with the player are; a change of role mails nothing.
      if (outcome === 'added' && mails) {
        await mailCollaboratorInvitations(ctx, store, updated ?? player, inviter ?? { name: null, email: caller.email }, [normalized]);
        mailed = true;
      }
      return (await store.players.invites(playerId)).find((candidate) => candidate.email === normalized);
    });
    if (!invite) throw noCollaborator(playerId, normalized);
    return inviteJson(ctx, playerId, invite);
  } finally {
    // A mail reserved and not sent (the player was full, or they were added meanwhile) is given back.
    if (!mailed) await mails?.release();
  }
}

export async function removeCollaborator(ctx: Ports, caller: Caller, playerId: string, email: string): Promise<Record<string, never>> {
  await loadPlayer(ctx, caller, playerId, 'write');
  const normalized = normalizeEmail(email);
  // Their role on the project came from this row (unless another player invites them too), and is read on every request: their sessions end with it.
  await ctx.store.transaction(async (store) => {
    if (!(await store.players.removeCollaborator(playerId, normalized, ctx.clock.now()))) throw noCollaborator(playerId, normalized);
    const player = await store.players.get(playerId);
    if (player) await recordPlayerUpdated(ctx, store, player);
  });
  return {};
}

export async function renewCollaboratorInvite(ctx: Ports, caller: Caller, playerId: string, email: string): Promise<Schemas['CollaboratorInvite']> {
  const player = await loadPlayer(ctx, caller, playerId, 'write');
  const normalized = normalizeEmail(email);
  const inviter = await ctx.store.users.get(caller.id);
  // The new link is mailed, as the first was: reserved first (its caps: invitation-mail.ts), so that renewing cannot
  // mail an address without end. Refused, the old link keeps working.
  const mails = await reserveInvitationMails(ctx, caller.id, [normalized]);
  try {
    const invite = await ctx.store.transaction(async (store) => {
      // A new nonce: the old link no longer derives from the stored one and stops working at once.
      if (!(await store.players.renewInvite(playerId, normalized, newInviteNonce()))) throw noCollaborator(playerId, normalized);
      await mailCollaboratorInvitations(ctx, store, player, inviter ?? { name: null, email: caller.email }, [normalized]);
      return (await store.players.invites(playerId)).find((candidate) => candidate.email === normalized);
    });
    if (!invite) throw noCollaborator(playerId, normalized);
    return inviteJson(ctx, playerId, invite);
  } catch (error) {
    await mails.release();
    throw error;
  }
}
