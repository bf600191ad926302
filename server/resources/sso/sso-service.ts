/**
 * Who an identity from the OpenID provider signs in as. The accounts rules: "An
 * identity links to an existing account only by an email the provider marks
 * verified; new people are let in as REGISTRATION says."
 *
 * 1. An identity (issuer, subject) linked before signs in to its account.
 * 2. Otherwise, an account with the identity's email: linked, and signed in
 *    to, only when the provider says the email is verified. And only when
 *    the account's own address was verified too: an account someone made
 *    with an address they do not own (open registration sends no proof)
 *    must not become the owner's account the day the owner signs in with
 *    the provider, with the squatter still holding its password (the
 *    "pre-hijacking" of accounts, Sudhodanan and Paverd, USENIX Security 2022).
 * 3. Otherwise, a new account: with open registration, or with an
 *    invitation the round trip was begun with (/signup?invite=…), and never
 *    when registration is closed.
 */
import type { RequestFacts } from '../../lib/request-facts.ts';
import type { Context } from '../../context.ts';
import type { OidcIdentity } from '../../auth/oidc-client.ts';
import type { SsoErrorCode } from '../../../shared/sso-errors.ts';
import type { UserRecord } from '../account/user-repository.ts';
import { recordSecurityEvent } from '../account/security-events.ts';
import { acceptInvitation } from '../sessions/invitations.ts';

type Ports = Pick<Context, 'store' | 'clock' | 'config'>;

export type SsoOutcome = { userId: string; error?: undefined } | { error: SsoErrorCode; userId?: undefined };

export async function accountForIdentity(ctx: Ports, facts: RequestFacts, identity: OidcIdentity, options: { invite?: string }): Promise<SsoOutcome> {
  const provider = ctx.config.oidc?.name ?? 'single sign-on';
  const linkedId = await ctx.store.sso.accountOf(identity.issuer, identity.subject);
  if (linkedId) {
    const user = await ctx.store.users.get(linkedId);
    if (!user) return { error: 'sso-failed' };
    return signInTo(user);
  }

  // The provider is the operator's, but what it says is still input: an address the API could not answer with is none.
  if (!identity.email || identity.email.length > 254 || !EMAIL.test(identity.email)) return { error: 'sso-no-email' };
  const existing = await ctx.store.users.findByEmail(identity.email);
  if (existing) {
    if (!identity.emailVerified) {
      await recordSecurityEvent(ctx, { userId: existing.id, kind: 'signin-failed', facts, detail: `single sign-on (${provider}): the provider has not verified the email` });
      return { error: 'sso-email-unverified' };
    }
    if (!existing.emailVerified) {
      await recordSecurityEvent(ctx, { userId: existing.id, kind: 'signin-failed', facts, detail: `single sign-on (${provider}): this account's email is not verified` });
      return { error: 'sso-account-unverified' };
    }
    if (existing.disabled) return { error: 'account-disabled' };
    await link(existing.id);
    return { userId: existing.id };
  }

  if (ctx.config.registration === 'closed') return { error: 'sso-registration-closed' };
  if (options.invite === undefined && ctx.config.registration !== 'open') return { error: 'sso-no-account' };
  const email = identity.email;
  let made: { error: SsoErrorCode } | { error?: undefined; user: UserRecord; how: string };
  try {
    made = await ctx.store.transaction(async (store) => {
      const now = ctx.clock.now();
      const invitation = options.invite === undefined ? undefined : await acceptInvitation({ ...ctx, store }, options.invite, email, now);
      if (options.invite !== undefined && !invitation) return { error: 'sso-invite-invalid' as const };
      // An invitation was sent to this address: holding it proves the address, as it does for a sign-up with a password.
      const user = await store.users.create(
        { email, name: displayName(identity.name), passwordHash: null, emailVerified: identity.emailVerified || invitation !== undefined, isAdmin: invitation?.admin ?? false },
        now,
      );
      // Made, or linked, by another request meanwhile: nothing of this one is kept (the invitation stays unused), and
      // the person, trying again, is found.
      if (!user || !(await store.sso.link(identity.issuer, identity.subject, user.id, now))) throw new LostRace();
      return { user, how: invitation ? `invitation (${invitation.kind})` : 'open registration' };
    });
  } catch (error) {
    if (error instanceof LostRace) return { error: 'sso-failed' };
    throw error;
  }
  if (made.error !== undefined) return { error: made.error };
  await recordSecurityEvent(ctx, { userId: made.user.id, kind: 'account-created', facts, detail: `single sign-on (${provider}), ${made.how}` });
  await recordSecurityEvent(ctx, { userId: made.user.id, kind: 'identity-linked', facts, detail: `${provider} (${identity.issuer})` });
  return { userId: made.user.id };

  function signInTo(user: UserRecord): SsoOutcome {
    return user.disabled ? { error: 'account-disabled' } : { userId: user.id };
  }

  async function link(userId: string): Promise<void> {
    await ctx.store.sso.link(identity.issuer, identity.subject, userId, ctx.clock.now());
    await recordSecurityEvent(ctx, { userId, kind: 'identity-linked', facts, detail: `${provider} (${identity.issuer})` });
  }
}

/** The spec's Email: ajv-formats' "email" (its fast form), which the API's answers are held to. */
const EMAIL = /^[a-z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** The spec's DisplayName: 1 to 100 characters, not only spaces; control characters dropped. */
function displayName(name: string | undefined): string | null {
  const cleaned = name?.replace(/\p{Cc}/gu, '').trim().slice(0, 100).trim();
  return cleaned ? cleaned : null;
}

/** Thrown to undo the transaction that makes an account, when another request made it first. */
class LostRace extends Error {}
