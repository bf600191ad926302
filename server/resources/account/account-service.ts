import type { Context } from '../../context.ts';
import type { Schemas } from '../../lib/api-types.ts';
import type { Caller } from '../../auth/access.ts';
import type { UserRecord } from './user-repository.ts';
import { requireIfMatch, type IfMatch, type Versioned } from '../../http/preconditions.ts';
import { PaymentProviderError } from '../../payments/payment-provider.ts';
import { requirePayments, viaProvider } from '../../payments/payment-problems.ts';

/** The ports this service uses, and nothing more. */
type Ports = Pick<Context, 'store' | 'clock'>;

async function load(ctx: Ports, caller: Caller): Promise<UserRecord> {
  return (await ctx.store.users.get(caller.id))!;
}

export function userJson(user: UserRecord): Schemas['User'] {
  return {
    id: user.id,
    object: 'user',
    email: user.email,
    ...(user.name !== null ? { name: user.name } : {}),
    emailVerified: user.emailVerified,
    admin: user.isAdmin,
    autoStack: user.autoStack,
    timeCreated: user.timeCreated,
  };
}

export async function getCurrentUser(ctx: Ports, caller: Caller): Promise<Schemas['User']> {
  return userJson(await load(ctx, caller));
}

/**
 * Sets or removes the display name, and sets the autoStack preference
 * (issue 21), each only when given. The spec's pattern (`\S`) has already
 * refused a name of spaces only; the stored name is trimmed, as the spec
 * says, so that what people see starts and ends with a visible character.
 */
export async function updateCurrentUser(ctx: Ports, caller: Caller, body: Schemas['UpdateCurrentUserRequest']): Promise<Schemas['User']> {
  if (body.name !== undefined) await ctx.store.users.setName(caller.id, body.name === null ? null : body.name.trim());
  if (body.autoStack !== undefined) await ctx.store.users.setAutoStack(caller.id, body.autoStack);
  return userJson(await load(ctx, caller));
}

export async function getPreferences(ctx: Ports, caller: Caller): Promise<Versioned<Schemas['PlayerPreferences']>> {
  const user = await load(ctx, caller);
  return { body: user.preferences, version: user.preferencesVersion };
}

/**
 * Merges the change into the stored preferences; null clears a preference.
 * The merge reads and writes in one transaction with the user's row locked,
 * so two changes to different preferences that race both land.
 */
export async function updatePreferences(
  ctx: Ports,
  caller: Caller,
  body: Schemas['UpdatePlayerPreferencesRequest'],
  ifMatch?: IfMatch,
): Promise<Versioned<Schemas['PlayerPreferences']>> {
  return ctx.store.transaction(async (store) => {
    const { preferences, preferencesVersion } = (await store.users.getForUpdate(caller.id))!;
    requireIfMatch(ifMatch, preferencesVersion, 'Your preferences', 'GET /me/preferences');
    const options: Record<string, unknown> = { ...preferences.options };
    for (const [name, value] of Object.entries(body.options ?? {})) {
      if (value === null) delete options[name];
      else options[name] = value;
    }
    const next: Schemas['PlayerPreferences'] = { options: options as Schemas['PlayerOptionsInput'] };
    const audience = body.public === undefined ? preferences.public : body.public;
    if (audience !== null && audience !== undefined) next.public = audience;
    return { body: next, version: await store.users.setPreferences(caller.id, next) };
  });
}

export function paymentProviderJson(user: UserRecord): Schemas['PaymentProvider'] {
  return user.paymentProvider ? { connected: true, ...user.paymentProvider } : { connected: false };
}

type PaymentPorts = Ports & Pick<Context, 'payments' | 'config' | 'logger'>;

/**
 * The connection, with the account's status as the provider answers now
 * (on a server that takes payments). A provider that does not answer
 * leaves the status out rather than failing the read: the connection
 * itself is ours to tell.
 */
export async function getPaymentProvider(ctx: PaymentPorts, caller: Caller): Promise<Schemas['PaymentProvider']> {
  const user = await load(ctx, caller);
  const json = paymentProviderJson(user);
  if (!ctx.payments || !user.paymentProvider) return json;
  try {
    const status = await ctx.payments.accountStatus(user.paymentProvider.accountId);
    return { ...json, chargesEnabled: status.chargesEnabled, detailsSubmitted: status.detailsSubmitted };
  } catch (error) {
    if (!(error instanceof PaymentProviderError)) throw error;
    ctx.logger.warn('payment provider: reading the account status failed', { err: error, accountId: user.paymentProvider.accountId });
    return json;
  }
}

/**
 * With an accountId: records it, as it is (the provider is not asked).
 * Without: Stripe Connect onboarding. The caller's connected account is
 * reused, else one is made; it is stored before the onboarding link is
 * asked for, so that a failure there loses no account (the next try
 * reuses it). The link goes back to this server's docs of the connection.
 */
export async function connectPaymentProvider(ctx: PaymentPorts, caller: Caller, body: Schemas['ConnectPaymentProviderRequest']): Promise<Schemas['PaymentProvider']> {
  if (body.accountId !== undefined) {
    await ctx.store.users.setPaymentProvider(caller.id, { provider: body.provider, accountId: body.accountId, timeConnected: ctx.clock.now() });
    return paymentProviderJson(await load(ctx, caller));
  }
  const payments = requirePayments(ctx);
  const user = await load(ctx, caller);
  let connection = user.paymentProvider;
  if (!connection) {
    const { accountId } = await viaProvider(ctx, 'creating a connected account', () => payments.createConnectedAccount({ userId: user.id, email: user.email }));
    connection = { provider: body.provider, accountId, timeConnected: ctx.clock.now() };
    await ctx.store.users.setPaymentProvider(caller.id, connection);
  }
  const accountId = connection.accountId;
  const docs = `${ctx.config.publicUrl}/docs#tag/Account/operation`;
  // Stripe, Account Links: refresh_url is where "the user will be redirected if the account link is expired, has been previously-visited, or is otherwise invalid".
  const link = await viaProvider(ctx, 'making an onboarding link', () =>
    payments.onboardingLink(accountId, { refreshUrl: `${docs}/connectPaymentProvider`, returnUrl: `${docs}/getPaymentProvider` }),
  );
  const status = await viaProvider(ctx, 'reading the account status', () => payments.accountStatus(accountId));
  return {
    ...paymentProviderJson({ ...user, paymentProvider: connection }),
    chargesEnabled: status.chargesEnabled,
    detailsSubmitted: status.detailsSubmitted,
    onboardingUrl: link.url,
    onboardingUrlExpires: link.expires,
  };
}

export async function disconnectPaymentProvider(ctx: Ports, caller: Caller) {
  await ctx.store.users.setPaymentProvider(caller.id, null);
  return paymentProviderJson(await load(ctx, caller));
}
