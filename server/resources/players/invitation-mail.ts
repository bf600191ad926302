/**
 * The collaborator's invitation mail (the accounts rules, "Email": "an invitation …
 * as a collaborator on a player: the mail carries the invite link the API
 * already makes"). Queued in the transaction that invites them, or renews
 * their link, when the server sends mail; without mail, the owner hands the
 * link out (it is in the API's answers).
 */
import { RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Context } from '../../context.ts';
import type { Store } from '../../repositories.ts';
import type { Db } from '../../store/db.ts';
import { HttpProblem } from '../../lib/problems.ts';
import { collaboratorInvitationMail } from '../../mail/templates.ts';
import { queueMail } from '../mail/mail-outbox.ts';
import { signUpInviteUrl } from './invite-links.ts';

type Ports = Pick<Context, 'config' | 'clock' | 'secrets' | 'jobQueued'>;

const HOUR_SECONDS = 3_600;

const capsByDb = new WeakMap<Db, { perInviter: RateLimiterAbstract; perRecipient: RateLimiterAbstract }>();
function capsOf(ctx: Pick<Context, 'store' | 'config'>) {
  let caps = capsByDb.get(ctx.store.db);
  if (!caps) {
    const { perInviterPerHour, perRecipientPerHour } = ctx.config.invitationMails;
    // Points are given back (an invitation that mails nobody after all), so no key is refused from memory: it would not hear them.
    caps = {
      perInviter: ctx.store.db.rateLimiter({ keyPrefix: 'invite-mail-from', points: perInviterPerHour, durationSeconds: HOUR_SECONDS, blockInMemory: false }),
      perRecipient: ctx.store.db.rateLimiter({ keyPrefix: 'invite-mail-to', points: perRecipientPerHour, durationSeconds: HOUR_SECONDS, blockInMemory: false }),
    };
    capsByDb.set(ctx.store.db, caps);
  }
  return caps;
}

/** The invitation mails an operation may send, reserved; `release` gives them back when it sends none after all. */
export interface InvitationMails {
  release(): Promise<void>;
}

const nothingReserved: InvitationMails = { release: async () => {} };

/**
 * Reserves the invitation mails to `emails` that `inviterId` is about to
 * send, before the transaction that queues them (the counters write through
 * the store's own connection), or refuses the whole operation with 429: at
 * most config.invitationMails.perInviterPerHour from one account, and
 * perRecipientPerHour to one address. Each take is one atomic upsert, so
 * requests sent at once cannot all pass. Without mail, nothing is counted:
 * the owner hands the links out.
 */
export async function reserveInvitationMails(ctx: Pick<Context, 'store' | 'config'>, inviterId: string, emails: readonly string[]): Promise<InvitationMails> {
  const recipients = [...new Set(emails)];
  if (!ctx.config.mail || recipients.length === 0) return nothingReserved;
  const { perInviter, perRecipient } = capsOf(ctx);
  const { perInviterPerHour, perRecipientPerHour } = ctx.config.invitationMails;
  const taken: [RateLimiterAbstract, string, number][] = [];
  const release = async () => {
    await Promise.all(taken.splice(0).map(([counters, key, points]) => counters.reward(key, points)));
  };
  /** Takes `points` of `key`, or gives back all taken so far and throws the 429 `explain` writes. */
  const take = async (counters: RateLimiterAbstract, key: string, points: number, explain: (minutes: number) => string) => {
    try {
      await counters.consume(key, points);
      taken.push([counters, key, points]);
    } catch (refusal) {
      await release();
      if (!(refusal instanceof RateLimiterRes)) throw refusal;
      // consume counted the refused points too (it adds before it compares): given back, so that the count is of mails sent.
      await counters.reward(key, points);
      const retryAfter = Math.max(1, Math.ceil(refusal.msBeforeNext / 1000));
      // RFC 6585 section 4: 429 "SHOULD include details explaining the condition, and MAY include a Retry-After header".
      throw new HttpProblem('rate-limited', explain(Math.ceil(retryAfter / 60)), { headers: { 'Retry-After': String(retryAfter) } });
    }
  };
  await take(
    perInviter,
    inviterId,
    recipients.length,
    (minutes) =>
      `At most ${perInviterPerHour} invitation mails an hour from one account${recipients.length > 1 ? `, and this would send ${recipients.length}` : ''}: invite fewer people now and the rest in ${minutes} minute(s), or give them the invite links yourself (GET /players/{playerid}/collaborators lists them). Nothing was changed.`,
  );
  for (const email of recipients) {
    await take(
      perRecipient,
      email,
      1,
      (minutes) =>
        `${email} has been sent ${perRecipientPerHour} invitation mails in the last hour, the most one address gets: try again in ${minutes} minute(s), or give them the invite link yourself. Nothing was changed.`,
    );
  }
  return { release };
}

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
