/**
 * The collaborator's invitation mail (the accounts rules, "Email": "an invitation …
 * as a collaborator on a player: the mail carries the invite link the API
 * already makes"). Queued in the transaction that invites them, or renews
 * their link, when the server sends mail; without mail, the owner hands the
 * link out (it is in the API's answers).
 */
import type { Context } from '../../context.ts';
import type { Store } from '../../repositories.ts';
import { collaboratorInvitationMail } from '../../mail/templates.ts';
import { queueMail } from '../mail/mail-outbox.ts';
import { signUpInviteUrl } from './invite-links.ts';

type Ports = Pick<Context, 'config' | 'clock' | 'secrets' | 'jobQueued'>;

/**
 * Queues, in `store`'s transaction, the invitation mail of each collaborator
 * of `player` whose email is in `emails`, with the link of its current nonce.
 */
export async function mailCollaboratorInvitations(
  ctx: Ports,
  store: Store,
  player: { id: string; name: string },
  invitedBy: { name: string | null; email: string },
  emails: readonly string[],
): Promise<void> {
  if (!ctx.config.mail || emails.length === 0) return;
  const wanted = new Set(emails);
  for (const invite of await store.players.invites(player.id)) {
    if (!wanted.has(invite.email)) continue;
    await queueMail(
      ctx,
      store,
      'collaborator-invitation',
      collaboratorInvitationMail({
        to: invite.email,
        invitedBy: invitedBy.name ?? invitedBy.email,
        playerName: player.name,
        role: invite.role,
        url: signUpInviteUrl(ctx, player.id, invite.email, invite.nonce),
      }),
    );
  }
}
